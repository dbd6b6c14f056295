// The service's log on stderr: a line of text for a person (the default), or one JSON object a line for a log shipper
// (`serve --log-format json`): time, level, message, the server and session it concerns where there is one, and the
// rest of the details. The plugin logs through OpenCode's `app.log` instead.
import type { LogLevel } from "../host/port.js";

export const LOG_FORMATS = ["text", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export type Log = (level: LogLevel, message: string, extra?: Record<string, unknown>) => void;

export function serviceLog(
  format: LogFormat,
  write: (line: string) => void = (line) => process.stderr.write(line),
): Log {
  if (format === "json")
    return (level, message, extra = {}) => {
      const { server, sessionId, ...rest } = extra;
      const line: Record<string, unknown> = { time: new Date().toISOString(), level, message };
      if (server !== undefined) line.server = server;
      if (sessionId !== undefined) line.session = sessionId;
      write(`${JSON.stringify({ ...line, ...rest })}\n`);
    };
  return (level, message, extra = {}) => {
    const { server, ...rest } = extra;
    const where = server === undefined ? "" : `[${String(server)}] `;
    const details = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : "";
    write(`${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} ${where}${message}${details}\n`);
  };
}
