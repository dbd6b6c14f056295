// Raw OpenCode bus events with the payload shapes of OpenCode 1.18.33 (see ../shared/notes/opencode-host.md).
let seq = 0;
const nextId = (prefix: string) => `${prefix}_${Date.now().toString(36)}${String(++seq).padStart(5, "0")}`;

/** A message's `message.updated`: OpenCode names a user message's model in `model`, an assistant message's flat. */
function messageUpdated(sessionID: string, id: string, role: "user" | "assistant", extra: Record<string, unknown>) {
  const model =
    role === "user"
      ? { model: { providerID: "scripted", modelID: "model-1" } }
      : { modelID: "model-1", providerID: "scripted" };
  const info = { id, sessionID, role, time: { created: Date.now() }, agent: "build", ...model, ...extra };
  return { type: "message.updated", properties: { sessionID, info } };
}

export const ev = {
  idle: (sessionID: string) => ({ type: "session.idle", properties: { sessionID } }),
  status: (sessionID: string, type: "busy" | "idle" | "retry") => ({
    type: "session.status",
    properties: {
      sessionID,
      status: type === "retry" ? { type, attempt: 1, message: "retrying", next: Date.now() + 2000 } : { type },
    },
  }),
  error: (sessionID: string, name: string, message = "failed") => ({
    type: "session.error",
    properties: { sessionID, error: { name, data: { message } } },
  }),
  /** A provider's HTTP error as OpenCode reports it once it gives up (or never retries). */
  providerError: (sessionID: string, statusCode: number, message: string, headers: Record<string, string> = {}) => ({
    type: "session.error",
    properties: {
      sessionID,
      error: {
        name: "APIError",
        data: { message, statusCode, isRetryable: statusCode === 429 || statusCode >= 500, responseHeaders: headers },
      },
    },
  }),
  /** OpenCode waiting to retry by itself until `next` (epoch ms). */
  retrying: (sessionID: string, next: number, message = "Too Many Requests", attempt = 1) => ({
    type: "session.status",
    properties: { sessionID, status: { type: "retry", attempt, message, next } },
  }),
  userMessage: (sessionID: string, id = nextId("msg"), extra: Record<string, unknown> = {}) =>
    messageUpdated(sessionID, id, "user", extra),
  textPart: (sessionID: string, messageID: string, text: string, synthetic?: boolean) => ({
    type: "message.part.updated",
    properties: {
      sessionID,
      part: { id: nextId("prt"), sessionID, messageID, type: "text", text, ...(synthetic ? { synthetic } : {}) },
      time: Date.now(),
    },
  }),
  assistantMessage: (sessionID: string, id = nextId("msg"), extra: Record<string, unknown> = {}) =>
    messageUpdated(sessionID, id, "assistant", extra),
  partUpdated: (sessionID: string, messageID = nextId("msg"), type = "text") => ({
    type: "message.part.updated",
    properties: { sessionID, part: { id: nextId("prt"), sessionID, messageID, type, text: "…" }, time: Date.now() },
  }),
  delta: (sessionID: string, messageID = "msg_assistant") => ({
    type: "message.part.delta",
    properties: { sessionID, messageID, partID: "prt_1", field: "text", delta: "x" },
  }),
  todos: (sessionID: string, todos: Array<[string, string]>) => ({
    type: "todo.updated",
    properties: { sessionID, todos: todos.map(([content, status]) => ({ content, status, priority: "medium" })) },
  }),
  deleted: (sessionID: string) => ({ type: "session.deleted", properties: { sessionID, info: { id: sessionID } } }),
  created: (sessionID: string, parentID?: string) => ({
    type: "session.created",
    properties: { sessionID, info: { id: sessionID, ...(parentID ? { parentID } : {}) } },
  }),
  titled: (sessionID: string, title: string) => ({
    type: "session.updated",
    properties: { sessionID, info: { id: sessionID, title } },
  }),
  question: (sessionID: string, id: string, open: boolean) => ({
    type: open ? "question.asked" : "question.replied",
    properties: { id, sessionID, requestID: id, questions: [] },
  }),
  compacted: (sessionID: string) => ({ type: "session.compacted", properties: { sessionID } }),
};
