// The service's log lines: text for a person, JSON (one object a line) for a log shipper, with the server and session
// each line concerns lifted out of the details.
import { describe, expect, it } from "vitest";
import { serviceLog } from "../../src/service/log.js";

function capture(format: "text" | "json") {
  const lines: string[] = [];
  return { log: serviceLog(format, (line) => lines.push(line)), lines };
}

describe("the service's log", () => {
  it("json: time, level, message, server and session, then the other details", () => {
    const { log, lines } = capture("json");
    log("warn", "reconnecting", { server: "pod-a", sessionId: "ses_1", attempt: 2 });
    log("info", "started");
    expect(lines).toHaveLength(2);
    expect(lines.every((l) => l.endsWith("\n") && !l.slice(0, -1).includes("\n"))).toBe(true);
    const first = JSON.parse(lines[0]!);
    expect(first).toEqual({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      level: "warn",
      message: "reconnecting",
      server: "pod-a",
      session: "ses_1",
      attempt: 2,
    });
    expect(Object.keys(JSON.parse(lines[1]!))).toEqual(["time", "level", "message"]);
  });

  it("text: the level, the server in brackets before the message, the rest as JSON", () => {
    const { log, lines } = capture("text");
    log("info", "connected to the event stream", { server: "pod-a", sessionId: "ses_1" });
    expect(lines[0]).toMatch(/^\S+Z INFO  \[pod-a\] connected to the event stream \{"sessionId":"ses_1"\}\n$/);
  });
});
