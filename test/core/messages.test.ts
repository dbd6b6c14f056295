import { describe, expect, it } from "vitest";
import { classifyUserMessage, inspectMessages, type SessionMessage } from "../../src/core/messages.js";
import { idLine } from "../../src/core/prompt.js";
import { classifyArmedCountdown } from "../../src/core/resume.js";
import { cancellationFor } from "../../src/core/activity.js";
import { afterInjectionFailed } from "../../src/core/transitions.js";

const user = (id: string, text: string, extra: Partial<SessionMessage> = {}): SessionMessage => ({
  id,
  role: "user",
  agent: "build",
  providerId: "p",
  modelId: "m",
  parts: [{ type: "text", text }],
  ...extra,
});
const assistant = (id: string, extra: Partial<SessionMessage> = {}): SessionMessage => ({ id, role: "assistant", completedAt: 1, parts: [], ...extra });

describe("inspectMessages", () => {
  it("takes the agent, model and variant of the latest real user message", () => {
    const facts = inspectMessages([
      user("1", "hi", { agent: "plan" }),
      assistant("2"),
      user("3", "go", { agent: "build", providerId: "openai", modelId: "gpt", variant: "high" }),
      assistant("4"),
    ]);
    expect(facts.latestReal).toMatchObject({ messageId: "3", agent: "build", providerId: "openai", modelId: "gpt", variant: "high" });
  });

  it("recognises its own injections by their id and never takes compaction as the agent", () => {
    const facts = inspectMessages([
      user("1", "go", { agent: "build" }),
      user("2", `reminder\n${idLine("inj_000000001")}`, { agent: "build" }),
      user("3", "summarize", { agent: "compaction", parts: [{ type: "compaction" }] }),
      assistant("4", { agent: "compaction", summary: true }),
    ]);
    expect(facts.ownInjectionIds).toEqual(["inj_000000001"]);
    expect(facts.latestReal?.messageId).toBe("2");
    expect(facts.compaction).toBe("just_ran");
  });

  it("sees a compaction still running", () => {
    expect(inspectMessages([user("1", "go"), assistant("2", { summary: true, completedAt: undefined })]).compaction).toBe("running");
  });

  it("an abort in the last assistant message counts until a real user message follows it", () => {
    const aborted = [user("1", "go"), assistant("2", { errorName: "MessageAbortedError" })];
    expect(inspectMessages(aborted).unansweredErrorKind).toBe("abort");
    expect(inspectMessages([...aborted, user("3", "again")]).unansweredErrorKind).toBeUndefined();
    expect(inspectMessages([user("1", "go"), assistant("2", { errorName: "APIError", errorMessage: "context length exceeded" })]).unansweredErrorKind).toBe("token_limit");
  });

  it("finds an unanswered question tool call", () => {
    const pending = inspectMessages([user("1", "go"), assistant("2", { parts: [{ type: "tool", tool: "question", toolStatus: "running" }] })]);
    expect(pending.unfinishedQuestion).toBe(true);
    const answered = inspectMessages([user("1", "go"), assistant("2", { parts: [{ type: "tool", tool: "question", toolStatus: "completed" }] })]);
    expect(answered.unfinishedQuestion).toBe(false);
  });

  it("classifies user messages", () => {
    expect(classifyUserMessage(user("1", "hello"))).toBe("real");
    expect(classifyUserMessage(user("1", idLine("inj_abcdefgh")))).toBe("own");
    expect(classifyUserMessage(user("1", "Continue if you have next steps", { parts: [{ type: "text", text: "Continue", synthetic: true }] }))).toBe("synthetic");
  });
});

describe("misfire policy", () => {
  const countdown = { armedAt: 1_000, deadlineAt: 3_000 };
  it("re-arms a future deadline for the time left", () => {
    expect(classifyArmedCountdown(countdown, 2_500, 60_000)).toEqual({ action: "rearm", remainingMs: 500 });
  });
  it("fires a countdown late by less than the window", () => {
    expect(classifyArmedCountdown(countdown, 62_999, 60_000)).toEqual({ action: "fire", lateMs: 59_999 });
  });
  it("expires one late by the window or more", () => {
    expect(classifyArmedCountdown(countdown, 63_000, 60_000)).toEqual({ action: "expire", lateMs: 60_000 });
  });
  it("never waits longer than the countdown's duration when the clock went back", () => {
    expect(classifyArmedCountdown(countdown, -3_600_000, 60_000)).toEqual({ action: "rearm", remainingMs: 2_000 });
  });
});

describe("cancellation", () => {
  it("a user message within the grace period does not cancel, after it does", () => {
    expect(cancellationFor("user_message", 1000, 1499, 500)).toBeUndefined();
    expect(cancellationFor("user_message", 1000, 1500, 500)).toBe("user_message");
  });
  it("other activity cancels at once", () => {
    for (const a of ["assistant_activity", "tool_activity", "session_error", "session_deleted", "busy"] as const) {
      expect(cancellationFor(a, 1000, 1000, 500)).toBe(a);
    }
  });
});

describe("retry backoff", () => {
  const policy = { maxRetries: 3, retryBaseMs: 1000, retryMaxMs: 3000 };
  it("doubles up to the cap and stops after maxRetries", () => {
    const delays: number[] = [];
    let failures = 0;
    for (;;) {
      const outcome = afterInjectionFailed(failures, 0, policy);
      failures = outcome.attempt;
      if (!outcome.retry) break;
      delays.push(outcome.delayMs);
    }
    expect(delays).toEqual([1000, 2000, 3000]);
    expect(failures).toBe(4);
  });
});
