// Reading untyped JSON from OpenCode one field at a time: a value of the wrong type reads as absent, never as a throw.

export type Json = Record<string, unknown>;

export function str(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

export function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

export function obj(value: unknown): Json | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
}

/** `{name, data: {message}}` as OpenCode sends errors (or a bare string). */
export function errorFields(error: unknown): { name?: string; message?: string } {
  const e = obj(error);
  if (!e) return typeof error === "string" ? { message: error } : {};
  return { name: str(e.name), message: str(obj(e.data)?.message) ?? str(e.message) };
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
  errorName?: string;
  errorMessage?: string;
  /** An assistant message that is a compaction summary (a user message's `summary` is an object, not `true`). */
  summary?: true;
  /** OpenCode's deprecated per-message `tools` map switched the write or edit tool off. */
  writeDenied?: boolean;
}

export function readMessageInfo(raw: unknown): MessageInfo | undefined {
  const info = obj(raw);
  const id = str(info?.id);
  const role = str(info?.role);
  if (!info || !id || !role) return undefined;
  const time = obj(info.time);
  const model = obj(info.model);
  const tools = obj(info.tools);
  const error = info.error === undefined ? {} : errorFields(info.error);
  return {
    id,
    sessionId: str(info.sessionID),
    role,
    createdAt: num(time?.created),
    completedAt: num(time?.completed),
    agent: str(info.agent) ?? str(info.mode),
    providerId: str(model?.providerID) ?? str(info.providerID),
    modelId: str(model?.modelID) ?? str(info.modelID),
    variant: str(model?.variant) ?? str(info.variant),
    errorName: error.name,
    errorMessage: error.message,
    summary: info.summary === true ? true : undefined,
    writeDenied: tools ? tools.write === false || tools.edit === false : undefined,
  };
}
