// One channel's fields read and checked, each problem in the words of the configuration's other problems
// (`key = value; allowed: …`) and never showing a secret: a URL as its scheme and host, a token or secret not at all.
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { didYouMean } from "../core/nearest.js";
import { NOTICE_KINDS, type NoticeKind } from "../core/notices.js";
import { shownUrl } from "./redact.js";

/** One channel's raw fields, where its secrets come from, and the problems found so far. */
export interface FieldReader {
  raw: Record<string, unknown>;
  env: NodeJS.ProcessEnv;
  /** What a relative command path is relative to. */
  directory: string;
  problems: string[];
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

export function problem(r: FieldReader, key: string, value: string, allowed: string): undefined {
  r.problems.push(`${key} = ${value}; allowed: ${allowed}`);
  return undefined;
}

const HIDDEN = "(hidden)";
const ENV_REF = 'a string, or {"env": "VARIABLE"} to read it from the environment';

/**
 * A string that may be given as `{ "env": "NAME" }`, so that a secret need not sit in a config file. `show` is how the
 * value may appear in a problem.
 */
function fromEnv(r: FieldReader, key: string, show: (value: string) => string): string | undefined {
  const value = r.raw[key];
  if (typeof value === "string") {
    if (value.trim()) return value;
    return problem(r, key, '""', ENV_REF);
  }
  const ref = value as { env?: unknown } | null;
  const isRef = typeof ref === "object" && ref !== null && !Array.isArray(ref);
  if (!isRef || typeof ref.env !== "string" || Object.keys(ref).length !== 1)
    return problem(r, key, isRef ? HIDDEN : show(shown(value)), ENV_REF);
  const variable = r.env[ref.env];
  if (variable?.trim()) return variable;
  return problem(r, key, shown(ref), `an environment variable that is set (${ref.env} is not)`);
}

/** The channel's `url`: required, http or https. */
export function readUrl(r: FieldReader): string | undefined {
  if (r.raw.url === undefined) return problem(r, "url", "(missing)", "an http:// or https:// URL");
  const url = fromEnv(r, "url", (s) => s);
  if (url === undefined) return undefined;
  const from = typeof r.raw.url === "string" ? "" : ` (from ${(r.raw.url as { env: string }).env})`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return problem(r, "url", `"${shownUrl(url)}"${from}`, "an http:// or https:// URL (this one does not parse)");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    return problem(r, "url", `"${shownUrl(url)}"${from}`, "an http:// or https:// URL");
  return url;
}

/** A secret (a signing secret, a token): optional, a string or `{ "env": … }`, never shown. */
export function readSecret(r: FieldReader, key: string): string | undefined {
  if (r.raw[key] === undefined) return undefined;
  return fromEnv(r, key, () => HIDDEN);
}

/** An HTTP header name (RFC 9110's token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What a header value sent as it is may hold: fetch refuses a line break, and anything past Latin-1. */
const HEADER_VALUE = /^[\x20-\x7e\t]+$/;
const HEADER_VALUE_ALLOWED = "printable ASCII on one line";

/** A secret sent in a header (a bearer token), never shown. */
export function readHeaderSecret(r: FieldReader, key: string): string | undefined {
  const value = readSecret(r, key);
  if (value === undefined || HEADER_VALUE.test(value)) return value;
  return problem(r, key, HIDDEN, HEADER_VALUE_ALLOWED);
}

/** Extra headers of a webhook; their values may be credentials, so never shown. `reserved`: set by the enforcer. */
export function readHeaders(r: FieldReader, reserved: (name: string) => boolean): Record<string, string> | undefined {
  const raw = r.raw.headers;
  if (raw === undefined) return undefined;
  const allowed = `an object of header names to values (${ENV_REF})`;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return problem(r, "headers", shown(raw), allowed);
  const headers: Record<string, string> = {};
  for (const name of Object.keys(raw)) {
    const key = `headers.${name}`;
    if (!TOKEN.test(name)) problem(r, key, HIDDEN, "a header name (letters, digits and !#$%&'*+-.^_`|~)");
    else if (reserved(name.toLowerCase())) problem(r, key, HIDDEN, "a header the enforcer does not set itself");
    else {
      const value = fromEnv({ ...r, raw: raw as Record<string, unknown> }, name, () => HIDDEN);
      if (value !== undefined && !HEADER_VALUE.test(value)) problem(r, key, HIDDEN, HEADER_VALUE_ALLOWED);
      else if (value !== undefined) headers[name] = value;
    }
  }
  return headers;
}

/** The kinds a channel receives: all of them unless named. */
export function readKinds(r: FieldReader): NoticeKind[] {
  const raw = r.raw.kinds;
  if (raw === undefined) return [...NOTICE_KINDS];
  const allowed = `a non-empty array of ${NOTICE_KINDS.join(", ")}`;
  if (!Array.isArray(raw) || raw.length === 0) return problem(r, "kinds", shown(raw), allowed) ?? [];
  const unknown = raw.find((k) => !NOTICE_KINDS.includes(k as NoticeKind));
  if (unknown !== undefined)
    return problem(r, "kinds", shown(raw), allowed + didYouMean(String(unknown), NOTICE_KINDS)) ?? [];
  return NOTICE_KINDS.filter((k) => raw.includes(k));
}

/** An optional integer within a range. */
export function readInteger(r: FieldReader, key: string, min: number, max: number): number | undefined {
  const value = r.raw[key];
  if (value === undefined) return undefined;
  if (typeof value === "number" && Number.isInteger(value) && value >= min && value <= max) return value;
  return problem(r, key, shown(value), `an integer from ${min} to ${max}`);
}

/** An optional array of non-empty strings, each passing `ok`. */
export function readStrings(
  r: FieldReader,
  key: string,
  allowed: string,
  ok: (item: string) => boolean = () => true,
): string[] | undefined {
  const value = r.raw[key];
  if (value === undefined) return undefined;
  if (Array.isArray(value) && value.every((item) => typeof item === "string" && ok(item))) return value as string[];
  return problem(r, key, shown(value), allowed);
}

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

/** The `command` of a command channel: a bare name stays one (spawn finds it on PATH), a relative path made absolute. */
export function readCommand(r: FieldReader): string | undefined {
  const command = r.raw.command;
  if (typeof command !== "string" || !command.trim())
    return problem(r, "command", command === undefined ? "(missing)" : shown(command), "a program's name or path");
  const found = findProgram(command, r.env, r.directory);
  if ("problem" in found) return problem(r, "command", shown(command), found.problem);
  return found.path;
}
