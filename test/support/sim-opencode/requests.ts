// The request side of a simulated server: the route a request names, the instance directory it is for, and the bodies
// the service sends checked as OpenCode 1.18.33 checks them (its 400 answers: `{name: "BadRequest", data: {message,
// kind: "Payload"}}`, the message naming what was expected and where).
import type { IncomingMessage } from "node:http";
import type { PromptInput } from "./session.js";
import type { StoredPart } from "./payloads.js";

export interface Route {
  method: string;
  /** Path segments after the first `/`: `session`, `ses_…`, `todo`. */
  segments: string[];
  query: URLSearchParams | undefined;
}

/** The SDK calls a simulated server answers, named as the SDK names them. */
export const SDK_CALLS = [
  "event.subscribe",
  "session.list",
  "session.create",
  "session.status",
  "session.get",
  "session.children",
  "session.todo",
  "session.messages",
  "session.promptAsync",
  "app.agents",
  "tui.showToast",
  "app.log",
] as const;

export type SdkCall = (typeof SDK_CALLS)[number];

const SESSION_CALLS: Record<string, SdkCall> = {
  "GET ": "session.get",
  "GET children": "session.children",
  "GET todo": "session.todo",
  "GET message": "session.messages",
  "POST prompt_async": "session.promptAsync",
};

/** The SDK call a request is (the session's id, if it names one), or undefined for a route OpenCode has and we lack. */
export function sdkCallOf(route: Route): { call: SdkCall; id?: string } | undefined {
  const { method, segments } = route;
  const [first, second, third, ...more] = segments;
  if (more.length > 0) return undefined;
  const get = method === "GET";
  if (first === "event" && second === undefined) return get ? { call: "event.subscribe" } : undefined;
  if (first === "agent" && second === undefined) return get ? { call: "app.agents" } : undefined;
  if (method === "POST" && first === "log" && second === undefined) return { call: "app.log" };
  if (method === "POST" && first === "tui" && second === "show-toast" && third === undefined)
    return { call: "tui.showToast" };
  if (first !== "session") return undefined;
  if (second === undefined)
    return get ? { call: "session.list" } : method === "POST" ? { call: "session.create" } : undefined;
  if (second === "status" && third === undefined) return get ? { call: "session.status" } : undefined;
  const call = SESSION_CALLS[`${method} ${third ?? ""}`];
  return call ? { call, id: second } : undefined;
}

export function routeOf(req: IncomingMessage): Route {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  const path = q < 0 ? url : url.slice(0, q);
  return {
    method: req.method ?? "GET",
    segments: path
      .split("/")
      .filter((s) => s.length > 0)
      .map(decodeURIComponent),
    query: q < 0 ? undefined : new URLSearchParams(url.slice(q + 1)),
  };
}

/** The instance a request is for: `?directory=`, else the `x-opencode-directory` header, else the server's own. */
export function directoryOf(req: IncomingMessage, route: Route, own: string): string {
  const queried = route.query?.get("directory");
  if (queried) return queried;
  const header = req.headers["x-opencode-directory"];
  return typeof header === "string" && header.length > 0 ? decodeURIComponent(header) : own;
}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = "";
  for await (const chunk of req) text += (chunk as Buffer).toString();
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return Symbol.for("malformed");
  }
}

/** A body OpenCode refuses, with the message it gives. */
export class PayloadError extends Error {}

const describe = (value: unknown) => (value === undefined ? "undefined" : JSON.stringify(value));

function record(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new PayloadError(`Expected object, got ${describe(body)}`);
  return body as Record<string, unknown>;
}

function field<T>(body: Record<string, unknown>, key: string, check: (v: unknown) => v is T, expected: string): T {
  const value = body[key];
  if (value === undefined) throw new PayloadError(`Missing key\n  at ["${key}"]`);
  if (!check(value)) throw new PayloadError(`Expected ${expected}, got ${describe(value)}\n  at ["${key}"]`);
  return value;
}

function optional<T>(body: Record<string, unknown>, key: string, check: (v: unknown) => v is T, expected: string) {
  return body[key] === undefined ? undefined : field(body, key, check, expected);
}

const isString = (v: unknown): v is string => typeof v === "string";
const isArray = (v: unknown): v is unknown[] => Array.isArray(v);
const isInteger = (v: unknown): v is number => Number.isInteger(v);
const oneOf =
  (...values: string[]) =>
  (v: unknown): v is string =>
    typeof v === "string" && values.includes(v);
const isModel = (v: unknown): v is { providerID: string; modelID: string } =>
  v !== null &&
  typeof v === "object" &&
  isString((v as Record<string, unknown>).providerID) &&
  isString((v as Record<string, unknown>).modelID);

function part(raw: unknown, index: number): StoredPart {
  const p = record(raw);
  const type = p.type;
  if (type !== "text")
    throw new PayloadError(
      `Expected "text" | "file" | "agent" | "subtask", got ${describe(type)}\n  at ["parts"][${index}]["type"]`,
    );
  if (!isString(p.text))
    throw new PayloadError(`Expected string, got ${describe(p.text)}\n  at ["parts"][${index}]["text"]`);
  const kept: StoredPart = { type, text: p.text };
  if (p.synthetic !== undefined) kept.synthetic = p.synthetic === true;
  return kept;
}

/** The body of `POST /session/:id/prompt_async` (text parts only: the service sends no other). */
export function promptBody(body: unknown): PromptInput {
  const b = record(body);
  const parts = field(b, "parts", isArray, "array").map(part);
  const messageID = optional(
    b,
    "messageID",
    (v): v is string => isString(v) && v.startsWith("msg"),
    'a string starting with "msg"',
  );
  const agent = optional(b, "agent", isString, "string");
  const model = optional(b, "model", isModel, "{ providerID: string, modelID: string }");
  return { parts, messageID, agent, model };
}

/** The body of `POST /tui/show-toast`, as the `tui.toast.show` event carries it. */
export function toastBody(body: unknown): Record<string, unknown> {
  const b = record(body);
  const title = optional(b, "title", isString, "string");
  const message = field(b, "message", isString, "string");
  const variant = field(
    b,
    "variant",
    oneOf("info", "success", "warning", "error"),
    '"info" | "success" | "warning" | "error"',
  );
  const duration = optional(b, "duration", isInteger, "an integer");
  return {
    ...(title !== undefined ? { title } : {}),
    message,
    variant,
    ...(duration !== undefined ? { duration } : {}),
  };
}

/** A line sent to OpenCode's log (`POST /log`). */
export interface LogLine {
  service: string;
  level: string;
  message: string;
}

/** The body of `POST /log`. */
export function logBody(body: unknown): LogLine {
  const b = record(body);
  const service = field(b, "service", isString, "string");
  const level = field(b, "level", oneOf("debug", "info", "error", "warn"), '"debug" | "info" | "error" | "warn"');
  const message = field(b, "message", isString, "string");
  return { service, level, message };
}
