// Reading untyped JSON from OpenCode one field at a time: a value of the wrong type reads as absent, never as a throw.
import { retryAfterMs, type ErrorReport } from "./errors.js";

export type Json = Record<string, unknown>;

export function str(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** An OpenCode id: a non-empty string without NUL (OpenCode never makes one; PostgreSQL's text cannot hold it). */
export function idOf(value: unknown): string | undefined {
  const text = str(value);
  return text !== undefined && !text.includes("\u0000") ? text : undefined;
}

export function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

export function obj(value: unknown): Json | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
}

/**
 * `{name, data: {message, statusCode, isRetryable, responseHeaders, responseBody}}` as OpenCode sends errors (or a
 * bare string). `now` reads a retry-after given as an HTTP date.
 */
export function errorFields(error: unknown, now?: number): ErrorReport {
  const e = obj(error);
  if (!e) return typeof error === "string" ? { message: error } : {};
  const data = obj(e.data);
  const report: ErrorReport = { name: str(e.name), message: str(data?.message) ?? str(e.message) };
  const statusCode = num(data?.statusCode) ?? num(e.statusCode);
  if (statusCode !== undefined) report.statusCode = statusCode;
  const retryable = data?.isRetryable ?? e.isRetryable;
  if (typeof retryable === "boolean") report.isRetryable = retryable;
  const body = str(data?.responseBody) ?? str(e.responseBody);
  if (body !== undefined) report.responseBody = body.slice(0, 2000);
  const headers = obj(data?.responseHeaders) ?? obj(e.responseHeaders);
  if (headers) report.responseHeaders = headers;
  const after = retryAfterMs(headers, now ?? Number.NaN);
  if (after !== undefined) report.retryAfterMs = after;
  return report;
}

/** Tokens by kind, as OpenCode reports them for a step or a message. */
export interface Tokens {
  input: number;
  output: number;
  reasoning: number;
  cacheRead: number;
  cacheWrite: number;
}

/** What one step or message cost, in the currency of the model's configured price (0 without one). */
export interface Usage {
  cost: number;
  tokens: Tokens;
}

/** `{cost, tokens: {input, output, reasoning, cache: {read, write}}}`; undefined when neither is there. */
export function readUsage(raw: Json | undefined): Usage | undefined {
  if (!raw) return undefined;
  const tokens = obj(raw.tokens);
  const cache = obj(tokens?.cache);
  const cost = num(raw.cost);
  if (cost === undefined && !tokens) return undefined;
  const count = (value: unknown) => Math.max(0, num(value) ?? 0);
  return {
    cost: Math.max(0, cost ?? 0),
    tokens: {
      input: count(tokens?.input),
      output: count(tokens?.output),
      reasoning: count(tokens?.reasoning),
      cacheRead: count(cache?.read),
      cacheWrite: count(cache?.write),
    },
  };
}

/** The fields of a message's `info` (user or assistant) that the enforcer uses, wherever the message came from. */
export interface MessageInfo {
  id: string;
  sessionId?: string;
  role: string;
  createdAt?: number;
  completedAt?: number;
  agent?: string;
  providerId?: string;
  modelId?: string;
  variant?: string;
  /** The error the turn ended with (assistant messages). */
  error?: ErrorReport;
  /** An assistant message that is a compaction summary (a user message's `summary` is an object, not `true`). */
  summary?: true;
  /** OpenCode's deprecated per-message `tools` map switched the write or edit tool off. */
  writeDenied?: boolean;
  /** The user message an assistant message answers. */
  parentId?: string;
  /** An assistant message's bill: its cost summed over its steps, but its tokens those of its last step only. */
  usage?: Usage;
  /** Why the model stopped (`stop`, `tool-calls`, `length`…). */
  finish?: string;
}

export function readMessageInfo(raw: unknown): MessageInfo | undefined {
  const info = obj(raw);
  const id = idOf(info?.id);
  const role = str(info?.role);
  if (!info || !id || !role) return undefined;
  const time = obj(info.time);
  const model = obj(info.model);
  const tools = obj(info.tools);
  const error =
    info.error === undefined || info.error === null
      ? undefined
      : errorFields(info.error, num(time?.completed) ?? num(time?.created));
  return {
    id,
    sessionId: idOf(info.sessionID),
    role,
    createdAt: num(time?.created),
    completedAt: num(time?.completed),
    agent: str(info.agent) ?? str(info.mode),
    providerId: str(model?.providerID) ?? str(info.providerID),
    modelId: str(model?.modelID) ?? str(info.modelID),
    variant: str(model?.variant) ?? str(info.variant),
    error: error && (error.name || error.message) ? error : undefined,
    summary: info.summary === true ? true : undefined,
    writeDenied: tools ? tools.write === false || tools.edit === false : undefined,
    ...(role === "assistant" ? assistantFields(info) : {}),
  };
}

function assistantFields(info: Json): Pick<MessageInfo, "parentId" | "usage" | "finish"> {
  const fields: Pick<MessageInfo, "parentId" | "usage" | "finish"> = {};
  const parentId = idOf(info.parentID);
  if (parentId) fields.parentId = parentId;
  const usage = readUsage(info);
  if (usage) fields.usage = usage;
  const finish = str(info.finish);
  if (finish) fields.finish = finish;
  return fields;
}
