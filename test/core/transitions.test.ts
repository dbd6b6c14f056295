import { describe, expect, it } from "vitest";
import {
  afterExplicitResume,
  afterInjectionFailed,
  afterTodoReadFailed,
  afterRealUserMessage,
  afterSessionError,
  continuationPatch,
  parsePatch,
} from "../../src/core/transitions.js";
import { ledgerOf, parseLedger } from "../../src/core/todos.js";
import { parseFileLedger } from "../../src/core/work.js";

describe("retry backoff", () => {
  const policy = { maxRetries: 3, retryBaseMs: 1000, retryMaxMs: 3000 };
  it("doubles up to the cap and stops after maxRetries: every attempt counts", () => {
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
  it("a failure retrying cannot fix gives up at once", () => {
    expect(afterInjectionFailed(0, 0, policy, true)).toMatchObject({ retry: false, attempt: 1 });
  });
  it("a todo read that fails is retried on the same backoff, at most maxRetries times in a row", () => {
    const plans = [0, 1, 2, 3].map((failuresBefore) => afterTodoReadFailed(failuresBefore, policy));
    expect(plans).toEqual([
      { retry: true, attempt: 1, delayMs: 1000 },
      { retry: true, attempt: 2, delayMs: 2000 },
      { retry: true, attempt: 3, delayMs: 3000 },
      { retry: false, attempt: 4 },
    ]);
  });
});

describe("session transitions", () => {
  it("a real user message starts the loop protections over; after one of our continuations it pauses", () => {
    const plain = afterRealUserMessage(5, { agent: "build" });
    expect(plain).toMatchObject({
      continuations: 0,
      stagnantContinuations: 0,
      workContinuations: 0,
      fileLedger: null,
      unproductiveReplies: 0,
      errorStreak: 0,
      lastUserMessageAt: 5,
      agent: "build",
    });
    expect(plain).not.toHaveProperty("pausedAt");
    const ledger = ledgerOf([{ content: "a", status: "in_progress" }]);
    const paused = afterRealUserMessage(5, {}, { messageId: "msg_1", baseline: ledger });
    expect(paused).toMatchObject({ pausedAt: 5, pauseMessageId: "msg_1" });
    expect(parseLedger(paused.pauseBaseline)).toEqual(ledger);
  });

  it("an explicit resume lifts the stop and the pause and resets every count", () => {
    expect(afterExplicitResume(7)).toMatchObject({
      resumedAt: 7,
      stoppedAt: null,
      pausedAt: null,
      pauseBaseline: null,
      continuations: 0,
      workContinuations: 0,
      fileLedger: null,
      consecutiveFailures: 0,
      errorStreak: 0,
      backoffUntil: null,
    });
  });

  it("what was allowed beyond the budgets is for the stretch they count: a real message or a resume ends it", () => {
    const none = { allowedContinuations: 0, allowedCost: 0, allowedTokens: 0 };
    expect(afterRealUserMessage(5, { agent: "build" })).toMatchObject(none);
    expect(afterExplicitResume(7)).toMatchObject(none);
  });

  it("provider errors count in a row; an abort resets the failures and keeps no streak", () => {
    const before = { errorStreak: 2, lastErrorAt: 1_000, lastErrorKind: "transient" };
    expect(afterSessionError("transient", { name: "APIError", retryAfterMs: 2000 }, 90_000, before)).toMatchObject({
      errorStreak: 3,
      lastErrorKind: "transient",
      lastErrorRetryAfterMs: 2000,
    });
    expect(afterSessionError("abort", {}, 90_000, before)).toMatchObject({ abortedAt: 90_000, consecutiveFailures: 0 });
    expect(afterSessionError("abort", {}, 90_000, before)).not.toHaveProperty("errorStreak");
    expect(afterSessionError("token_limit", {}, 90_000, { errorStreak: 0 })).toMatchObject({ tokenLimitAt: 90_000 });
  });

  it("two errors of one turn count once, and the generic wrapper does not hide the telling cause", () => {
    const cause = { errorStreak: 0, lastErrorAt: 5_000, lastErrorKind: "permanent" };
    expect(
      afterSessionError("other", { name: "UnknownError", message: "UnknownError: UnknownError" }, 5_002, cause),
    ).toEqual({ lastErrorAt: 5_002 });
    const transient = { errorStreak: 1, lastErrorAt: 5_000, lastErrorKind: "transient" };
    expect(afterSessionError("transient", {}, 5_100, transient)).not.toHaveProperty("errorStreak");
    expect(afterSessionError("permanent", { name: "APIError" }, 5_100, transient)).toMatchObject({
      lastErrorKind: "permanent",
    });
  });

  it("a continuation stores its counts and the merged ledger, and survives a JSON round trip", () => {
    const patch = continuationPatch({
      ledger: ledgerOf([{ content: "a", status: "in_progress" }]),
      todos: [
        { content: "a", status: "pending" },
        { content: "b", status: "completed" },
      ],
      fileLedger: { files: { "/p/x.ts": ["h1"] } },
      turnFiles: { answers: "own", files: [{ path: "/p/x.ts", after: "h2" }] },
      stagnantStreak: 2,
      workStreak: 4,
      unproductiveStreak: 1,
    });
    expect(parseLedger(patch.todoSnapshot)).toEqual({ closedHigh: 1, ranks: { a: 1, b: 2 } });
    expect(patch).toMatchObject({ stagnantContinuations: 2, workContinuations: 4, unproductiveReplies: 1 });
    expect(parseFileLedger(patch.fileLedger)).toEqual({ files: { "/p/x.ts": ["h1", "h2"] } });
    expect(parsePatch(JSON.stringify(patch))).toEqual(patch);
    expect(parsePatch("not json")).toEqual({});
  });
});
