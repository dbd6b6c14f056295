// What no schema can know of a channel that passed it (channel-schema.ts): each `{ "env": NAME }` read from the
// environment, and then checked as a value written in place is (a URL as a URL, a token or header value as a header's),
// and the program of a command channel found as a shell would find it. Each problem in the schema's words
// (`key = value; allowed: …`), never showing a secret: a URL as its scheme and host, a token or secret not at all.
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { HEADER_VALUE, HEADER_VALUE_ALLOWED, urlProblem } from "./channel-schema.js";
import { shownUrl } from "./redact.js";

/** Where a channel's secrets come from, and what a relative command path is relative to. */
export interface ChannelEnvironment {
  env: NodeJS.ProcessEnv;
  directory: string;
}

/** A value as a problem shows it: JSON, at most 60 characters. */
export function shown(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

type EnvRef = { env: string };
/** A field the schema accepted: a string written in place, or the variable it is read from. */
type FromEnv = string | EnvRef;

const HIDDEN = "(hidden)";

/** The value itself, or its variable's (a problem when that is not set); `check` says what an unwritten one must be. */
function fromEnv(
  key: string,
  value: FromEnv,
  { env }: ChannelEnvironment,
  problems: string[],
  check: (value: string, from: string) => string | undefined,
): string | undefined {
  if (typeof value === "string") return value;
  const variable = env[value.env];
  if (!variable?.trim()) {
    problems.push(`${key} = ${shown(value)}; allowed: an environment variable that is set (${value.env} is not)`);
    return undefined;
  }
  const problem = check(variable, ` (from ${value.env})`);
  if (problem) problems.push(problem);
  return problem ? undefined : variable;
}

const headerValue = (key: string) => (value: string) =>
  HEADER_VALUE.test(value) ? undefined : `${key} = ${HIDDEN}; allowed: ${HEADER_VALUE_ALLOWED}`;
const anything = () => undefined;

/**
 * The program a command names, found as a shell would: a name with no `/` on PATH, a path as it is (a relative one
 * from `directory`). Either the path to run, or why it cannot run.
 */
export function findProgram(
  command: string,
  env: NodeJS.ProcessEnv,
  directory: string,
): { path: string } | { problem: string } {
  const runnable = (path: string) => {
    try {
      if (!statSync(path).isFile()) return "not a file";
      accessSync(path, constants.X_OK);
      return undefined;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ENOENT" ? "not found" : "not executable";
    }
  };
  if (command.includes("/")) {
    const path = isAbsolute(command) ? command : resolve(directory, command);
    const why = runnable(path);
    return why ? { problem: `an executable file (${path} is ${why})` } : { path };
  }
  const folders = (env.PATH ?? "").split(delimiter).map((folder) => folder || directory);
  let seen: string | undefined;
  for (const folder of folders) {
    const why = runnable(join(folder, command));
    if (!why) return { path: command };
    if (why !== "not found") seen ??= `${join(folder, command)} is ${why}`;
  }
  return { problem: `a program found on PATH or a path to one (${seen ?? `no ${command} on PATH`})` };
}

/**
 * The fields of a channel the schema accepted, with every `{ "env": … }` replaced by its value and a command by the
 * program to run (a bare name stays one: spawn finds it on PATH); a problem line for each that cannot be.
 */
export function resolvedFields(
  fields: Record<string, unknown>,
  environment: ChannelEnvironment,
  problems: string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...fields };
  if (fields.url !== undefined)
    out.url = fromEnv("url", fields.url as FromEnv, environment, problems, (url, from) => {
      const problem = urlProblem(url);
      return problem && `url = "${shownUrl(url)}"${from}; allowed: ${problem}`;
    });
  if (fields.secret !== undefined)
    out.secret = fromEnv("secret", fields.secret as FromEnv, environment, problems, anything);
  if (fields.token !== undefined)
    out.token = fromEnv("token", fields.token as FromEnv, environment, problems, headerValue("token"));
  if (fields.headers !== undefined)
    out.headers = Object.fromEntries(
      Object.entries(fields.headers as Record<string, FromEnv>).map(([name, value]) => {
        const key = `headers.${name}`;
        return [name, fromEnv(key, value, environment, problems, headerValue(key))];
      }),
    );
  if (typeof fields.command === "string") {
    const found = findProgram(fields.command, environment.env, environment.directory);
    if ("problem" in found) problems.push(`command = ${shown(fields.command)}; allowed: ${found.problem}`);
    else out.command = found.path;
  }
  return out;
}
