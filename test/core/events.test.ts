import { describe, expect, it } from "vitest";
import { classifyError } from "../../src/core/errors.js";
import { translateEvent } from "../../src/core/events.js";
import { ev } from "../support/events.js";

describe("translateEvent", () => {
  it("translates the events the enforcer reacts to", () => {
    expect(translateEvent(ev.idle("s"))).toEqual({ type: "idle", sessionId: "s" });
    expect(translateEvent(ev.status("s", "retry"))).toEqual({
      type: "status",
      sessionId: "s",
      status: "retry",
      retry: { attempt: 1, message: "retrying", next: expect.any(Number) },
    });
    expect(translateEvent(ev.error("s", "MessageAbortedError"))).toMatchObject({
      type: "error",
      sessionId: "s",
      kind: "abort",
    });
    expect(
      translateEvent(ev.error("s", "APIError", "This model's maximum context length is 8192 tokens")),
    ).toMatchObject({ kind: "token_limit" });
    expect(translateEvent(ev.error("s", "APIError", "rate limited"))).toMatchObject({ kind: "limit" });
    expect(translateEvent(ev.error("s", "APIError", "Service Unavailable"))).toMatchObject({ kind: "transient" });
    expect(translateEvent(ev.error("s", "UnknownError", "something odd"))).toMatchObject({ kind: "other" });
    expect(translateEvent(ev.userMessage("s", "m1"))).toMatchObject({
      type: "message",
      role: "user",
      messageId: "m1",
      agent: "build",
      providerId: "scripted",
      modelId: "model-1",
    });
    expect(translateEvent(ev.todos("s", [["a", "pending"]]))).toEqual({
      type: "todos",
      sessionId: "s",
      todos: [{ content: "a", status: "pending", priority: "medium" }],
    });
    expect(translateEvent(ev.created("c", "p"))).toEqual({
      type: "session_info",
      sessionId: "c",
      parentId: "p",
      directory: undefined,
    });
    expect(translateEvent(ev.deleted("s"))).toEqual({ type: "session_deleted", sessionId: "s" });
    expect(translateEvent(ev.question("s", "q1", true))).toEqual({
      type: "request",
      sessionId: "s",
      requestId: "q1",
      open: true,
    });
    expect(translateEvent(ev.question("s", "q1", false))).toEqual({
      type: "request",
      sessionId: "s",
      requestId: "q1",
      open: false,
    });
    expect(translateEvent(ev.compacted("s"))).toEqual({ type: "compacted", sessionId: "s" });
  });

  it("ignores events without a session id, of unknown type, or of the wrong shape, without throwing", () => {
    const bad: unknown[] = [
      null,
      undefined,
      42,
      "session.idle",
      [],
      {},
      { type: "session.idle" },
      { type: "session.idle", properties: {} },
      { type: "session.idle", properties: { sessionID: "" } },
      { type: "session.idle", properties: { sessionID: 7 } },
      { type: "session.status", properties: { sessionID: "s", status: { type: "sleeping" } } },
      { type: "session.status", properties: { sessionID: "s", status: "busy" } },
      { type: "message.updated", properties: { info: { id: "m", role: "system", sessionID: "s" } } },
      { type: "message.updated", properties: { info: "x" } },
      { type: "todo.updated", properties: { sessionID: "s", todos: "none" } },
      { type: "session.error", properties: { error: { name: "APIError" } } },
      { type: "made.up", properties: { sessionID: "s" } },
      { type: { nested: true }, properties: { sessionID: "s" } },
    ];
    for (const event of bad) expect(translateEvent(event)).toBeUndefined();
  });
});

describe("classifyError (names and messages)", () => {
  it.each([
    ["MessageAbortedError", undefined, "abort"],
    ["AbortError", undefined, "abort"],
    ["DOMException", "The operation was aborted", "abort"],
    ["ContextOverflowError", undefined, "token_limit"],
    ["APIError", "prompt is too long: 210000 tokens > 200000 maximum", "token_limit"],
    ["APIError", "Input exceeds the context window of this model", "token_limit"],
    ["MessageOutputLengthError", undefined, "other"],
    ["APIError", "Internal server error", "transient"],
    ["ProviderAuthError", "invalid x-api-key", "permanent"],
    [undefined, undefined, "other"],
  ])("%s %s → %s", (name, message, kind) => {
    expect(classifyError({ name, message })).toBe(kind);
  });
});
