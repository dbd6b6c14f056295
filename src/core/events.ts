// OpenCode's raw bus events → the few facts the enforcer reacts to. Tolerant by design: a missing field, a wrong
// type or an unknown event type yields `undefined` (ignored), never a throw. The streaming events
// (`message.part.delta`, `message.part.updated`) are not translated here: the engine answers them from memory
// without allocating (see engine/enforcer.ts).
import { classifyError, type ErrorKind, type ErrorReport } from "./errors.js";
import { errorFields, idOf, num, obj, readMessageInfo, str, type Json, type MessageInfo } from "./fields.js";
import { normalizeTodos, type Todo } from "./todos.js";

export type SessionStatus = "busy" | "idle" | "retry";

/** OpenCode waiting to retry a failed step by itself: its attempt, the error's message, and when it tries next. */
export interface RetryStatus {
  attempt?: number;
  message?: string;
  /** Epoch ms. */
  next?: number;
}

export type DomainEvent =
  | { type: "idle"; sessionId: string }
  | { type: "status"; sessionId: string; status: SessionStatus; retry?: RetryStatus }
  | { type: "error"; sessionId: string; kind: ErrorKind; error: ErrorReport }
  | ({ type: "message"; sessionId: string; messageId: string; role: "user" | "assistant" } & Omit<
      MessageInfo,
      "id" | "sessionId" | "role" | "writeDenied"
    >)
  | { type: "todos"; sessionId: string; todos: Todo[] }
  | { type: "session_info"; sessionId: string; parentId?: string; directory?: string; title?: string }
  | { type: "session_deleted"; sessionId: string }
  | { type: "request"; sessionId: string; requestId: string; open: boolean }
  | { type: "compacted"; sessionId: string };

/** A message as its event reported it: a person's, an assistant's, or one of the enforcer's own. */
export type UserMessageEvent = Extract<DomainEvent, { type: "message" }>;

type Props = Json;

function translateMessage(props: Props): DomainEvent | undefined {
  const info = readMessageInfo(props.info);
  const sessionId = info?.sessionId ?? idOf(props.sessionID);
  if (!info || !sessionId || (info.role !== "user" && info.role !== "assistant")) return undefined;
  return {
    type: "message",
    sessionId,
    messageId: info.id,
    role: info.role,
    createdAt: info.createdAt,
    completedAt: info.completedAt,
    agent: info.agent,
    providerId: info.providerId,
    modelId: info.modelId,
    variant: info.variant,
    error: info.error,
    summary: info.summary,
  };
}

function requestEvent(props: Props, open: boolean): DomainEvent | undefined {
  const sessionId = idOf(props.sessionID);
  const requestId = str(props.id) ?? str(props.requestID) ?? str(props.permissionID);
  return sessionId && requestId ? { type: "request", sessionId, requestId, open } : undefined;
}

/** `now` (epoch ms) dates a provider's retry-after given as an HTTP date. */
export function translateEvent(raw: unknown, now?: number): DomainEvent | undefined {
  const event = obj(raw);
  const type = event && str(event.type);
  const props = event && obj(event.properties);
  if (!type || !props) return undefined;
  switch (type) {
    case "session.idle": {
      const sessionId = idOf(props.sessionID);
      return sessionId ? { type: "idle", sessionId } : undefined;
    }
    case "session.status": {
      const sessionId = idOf(props.sessionID);
      const info = obj(props.status);
      const status = str(info?.type);
      if (!sessionId || (status !== "busy" && status !== "idle" && status !== "retry")) return undefined;
      if (status !== "retry") return { type: "status", sessionId, status };
      const retry: RetryStatus = { attempt: num(info?.attempt), message: str(info?.message), next: num(info?.next) };
      return { type: "status", sessionId, status, retry };
    }
    case "session.error": {
      const sessionId = idOf(props.sessionID);
      if (!sessionId) return undefined;
      const error = errorFields(props.error, now);
      return { type: "error", sessionId, kind: classifyError(error), error };
    }
    case "message.updated":
      return translateMessage(props);
    case "todo.updated": {
      const sessionId = idOf(props.sessionID);
      const todos = normalizeTodos(props.todos);
      return sessionId && todos ? { type: "todos", sessionId, todos } : undefined;
    }
    case "session.created":
    case "session.updated": {
      const info = obj(props.info);
      const sessionId = idOf(info?.id) ?? idOf(props.sessionID);
      if (!sessionId) return undefined;
      const [parentId, directory, title] = [str(info?.parentID), str(info?.directory), str(info?.title)];
      return { type: "session_info", sessionId, parentId, directory, ...(title === undefined ? {} : { title }) };
    }
    case "session.deleted": {
      const sessionId = idOf(obj(props.info)?.id) ?? idOf(props.sessionID);
      return sessionId ? { type: "session_deleted", sessionId } : undefined;
    }
    case "question.asked":
    case "permission.asked":
    case "permission.updated":
      return requestEvent(props, true);
    case "question.replied":
    case "question.rejected":
    case "permission.replied":
      return requestEvent(props, false);
    case "session.compacted": {
      const sessionId = idOf(props.sessionID);
      return sessionId ? { type: "compacted", sessionId } : undefined;
    }
    default:
      return undefined;
  }
}
