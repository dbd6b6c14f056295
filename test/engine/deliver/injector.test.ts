// The injector takes a due countdown to an outcome: the guards at the deadline and right before the prompt, the claim,
// the prompt call, and its outcome recorded with the retry the plan asks for. It promises: a call that may have
// delivered is looked for in the session (by the message id chosen for it, or the injection id its text carries) once
// OpenCode had time to write it, before anything is recorded; a continuation found is `sent` and counted once; one
// possibly delivered is `unknown` and counted; one certainly not delivered is `failed` and not counted; every failure
// is retried with backoff until maxRetries, then the user is told once; a countdown that is no longer this process's
// at the prompt call is neither sent nor judged; an earlier continuation that arrived after all stops the next one
// from going out, and the session is looked at again once the attempt has left its queue. Built from the delivery
// group's real parts (test/support/delivery-rig.ts); the cases the enforcer-level tests already walk (delivery.test.ts,
// restart.test.ts) are left to them.
import { describe, expect, it } from "vitest";
import { Countdowns } from "../../../src/engine/wait/countdowns.js";
import { HostHttpError, type PromptRequest } from "../../../src/host/port.js";
import {
  armed,
  attempt,
  BASE_MS,
  build,
  failures,
  GIVE_UP,
  pass,
  presetFailures,
  promptThat,
  rig,
  rows,
  S,
  store,
  useDeliveryRig,
} from "../../support/delivery-rig.js";
import { liveOwner, makeContext } from "../../support/engine-context.js";
import { advance, until } from "../../support/fake-time.js";

useDeliveryRig();

describe("a prompt call that may have delivered is looked for before anything is recorded", () => {
  it.each([
    { how: "by the message id chosen for it", write: (r: PromptRequest) => ({ id: r.messageId!, text: "(edited)" }) },
  ])("$how, once OpenCode had time to write it: found → sent, counted once", async ({ write }) => {
    build();
    promptThat(new HostHttpError("prompt", 502, "bad gateway"), (request) => {
      const { id, text } = write(request);
      rig.host.addUserMessage(S, text, { id });
    });
    await attempt();
    await until(() => rig.host.calls.prompt === 1);
    const readsAtCall = rig.host.calls.messages;
    await advance(299);
    expect(rig.host.calls.messages).toBe(readsAtCall);
    await pass(1);
    expect(rig.host.calls.messages).toBe(readsAtCall + 1);
    expect(rows.injections(S)).toMatchObject([{ status: "sent" }]);
    expect(rows.audit(S).at(-1)).toMatchObject({
      event: "injected",
      detail: { afterError: "prompt: HTTP 502 bad gateway" },
    });
    expect(rows.session(S)).toMatchObject({ continuations: 1, consecutive_failures: 0 });
    expect(failures()).toEqual([]);
    expect(armed()).toEqual([]);
  });

  it("not found after an answer that came back: `failed`, not counted as a continuation, retried after the backoff", async () => {
    build();
    const requests = promptThat(new HostHttpError("prompt", 503, "unavailable"));
    await attempt();
    await pass(300);
    const [injection] = rows.injections(S);
    expect(injection).toMatchObject({ status: "failed", error: "prompt: HTTP 503 unavailable" });
    expect(injection!.message_id).toBe(requests[0]!.messageId);
    expect(failures()).toMatchObject([
      {
        reason: "retrying",
        detail: { injectionId: injection!.id, error: "prompt: HTTP 503 unavailable", attempt: 1, retryInMs: BASE_MS },
      },
    ]);
    const retry = armed();
    expect(retry).toMatchObject([{ attempt: 1 }]);
    const armedAt = retry[0]!.armed_at as number;
    expect(retry[0]!.deadline_at).toBe(armedAt + BASE_MS);
    expect(rows.session(S)).toMatchObject({
      continuations: 0,
      consecutive_failures: 1,
      backoff_until: armedAt + BASE_MS,
    });
    expect(rows.audit(S).at(-1)).toMatchObject({
      event: "armed",
      detail: { attempt: 1, retryOf: injection!.id, reason: "backoff" },
    });
    expect(rig.host.logs).toContainEqual(expect.objectContaining({ level: "warn", message: "continuation failed" }));
  });

  it.each([
    { failure: "a reset connection", behaviour: "fail" as const, reason: "retrying" },
    { failure: "a timeout", behaviour: "hang" as const, reason: "timeout" },
  ])("after $failure, a session that cannot be read: `unknown` ($reason), counted, retried", async (c) => {
    build({ promptTimeoutMs: 500 });
    rig.host.messagesBehaviour = "fail";
    rig.host.promptScript = [c.behaviour];
    await attempt();
    await pass(500 + 300);
    expect(rows.injections(S)).toMatchObject([{ status: "unknown" }]);
    expect(failures()).toMatchObject([{ reason: c.reason, detail: { attempt: 1, retryInMs: BASE_MS } }]);
    // Possibly delivered: it spends the budget like a continuation that went out.
    expect(rows.session(S)).toMatchObject({ continuations: 1, consecutive_failures: 1 });
    expect(armed()).toMatchObject([{ attempt: 1 }]);
    expect(rig.host.logs).toContainEqual(
      expect.objectContaining({ level: "warn", message: "continuation outcome unknown" }),
    );
  });

  it("a reset connection and an unreadable session with no retry left: `unknown`, audited gave_up (not retrying)", async () => {
    build({ maxRetries: 0 });
    rig.host.messagesBehaviour = "fail";
    rig.host.promptScript = ["fail"];
    await attempt();
    await pass(300);
    expect(rows.injections(S)).toMatchObject([{ status: "unknown" }]);
    expect(failures()).toMatchObject([{ reason: "gave_up", detail: { attempt: 1, final: true } }]);
    expect(armed()).toEqual([]);
  });

  it.each([
    { maxRetries: 0, before: 0 },
    { maxRetries: 2, before: 2 },
  ])(
    "the attempt past maxRetries ($maxRetries, $before failed before) gives up: nothing armed, the user told",
    async ({ maxRetries, before }) => {
      build({ maxRetries });
      if (before) await presetFailures(before);
      rig.host.promptDefault = "fail";
      await attempt(before);
      await pass(300);
      const attemptNo = before + 1;
      expect(failures()).toMatchObject([{ reason: "gave_up", detail: { attempt: attemptNo, final: true } }]);
      expect(failures()[0]!.detail).not.toHaveProperty("retryInMs");
      expect(armed()).toEqual([]);
      expect(rows.session(S)).toMatchObject({
        consecutive_failures: attemptNo,
        backoff_until: null,
        notified_stop: "gave_up",
      });
      expect(rig.host.toasts).toMatchObject([
        {
          variant: "warning",
          message: expect.stringMatching(new RegExp(`^Stopped: sending failed ${attemptNo} times?\\.`)),
        },
      ]);
      expect(rig.host.logs).toContainEqual(expect.objectContaining({ level: "error", message: "continuation failed" }));
      // Told once: another give-up for the same reason is not news.
      await rig.outcomes.retry(S, { retry: false, attempt: attemptNo + 1 }, undefined, GIVE_UP);
      expect(rig.host.toasts).toHaveLength(1);
    },
  );
});

describe("a countdown that is no longer this process's at the prompt call", () => {
  it("is neither sent nor judged when another owner took it over after this process's lease ran out", async () => {
    build({ leaseMs: 1000 });
    const successorContext = makeContext({ store, config: rig.ctx.config, owner: liveOwner() });
    const successor = new Countdowns(successorContext);
    await rig.countdowns.arm({ sessionId: S, attempt: 0, delayMs: 5000, detail: {} });
    await advance(1001);
    expect(await successor.recover("lease_expired")).toMatchObject({ rearmed: 1 });
    await pass(4000);
    expect(rig.host.calls.prompt).toBe(0);
    expect(rows.injections(S)).toEqual([]);
    expect(armed()).toHaveLength(1);
    // Let go at the deadline (the row is no longer this process's), so its guards end nothing of the successor's.
    expect(armed()[0]).toMatchObject({ owner: successorContext.owner });
    expect(rig.countdowns.get(S)).toBeUndefined();
    successorContext.timers.stop();
  });
});

describe("an earlier continuation found in the session before the next goes out", () => {
  it("a `failed` one that arrived late is counted then, and the retry is not sent on top of it", async () => {
    build();
    const requests = promptThat(new TypeError("fetch failed", { cause: new Error("ECONNRESET") }));
    await attempt();
    await pass(300);
    expect(rows.injections(S)).toMatchObject([{ status: "failed" }]);
    expect(rows.session(S)).toMatchObject({ continuations: 0, consecutive_failures: 1 });
    // OpenCode wrote it after all, after the look-up.
    rig.host.addUserMessage(S, requests[0]!.text, { id: requests[0]!.messageId });
    await pass(BASE_MS);
    expect(rig.host.calls.prompt).toBe(1);
    const [first] = rows.injections(S);
    expect(rows.injections(S)).toMatchObject([{ status: "sent" }]);
    expect(rows.audit(S).find((r) => r.event === "reconciled")).toMatchObject({
      reason: "found",
      detail: { injectionId: first!.id, was: "failed" },
    });
    expect(rows.session(S)).toMatchObject({ continuations: 1, consecutive_failures: 0, backoff_until: null });
    expect(rows.countdowns(S).at(-1)).toMatchObject({ state: "cancelled", end_reason: "in_flight" });
    expect(rows.audit(S).at(-1)).toMatchObject({
      event: "skipped",
      reason: "in_flight",
      detail: { stage: "before_prompt", delivered: first!.id },
    });
    // Its turn ran, so the session is idle again: looked at, but only once the attempt has left the session's queue.
    expect(rig.looks).toEqual([]);
    expect(rig.queue.isBusy(S)).toBe(false);
    // The timer queue's next tick (fake timers put a 0 ms timeout set during a tick 1 ms ahead).
    await advance(1);
    expect(rig.looks).toEqual([S]);
  });
});

describe("what the fired row says of the attempt", () => {
  it("how long it queued behind the cap and how long the guards' reads took, from due to claim", async () => {
    build({ maxConcurrentInjections: 1 });
    const other = "ses_delivery_other";
    rig.host.addUserMessage(other, "build the other thing");
    rig.host.setTodos(other, [["c", "pending"]]);
    rig.host.todoDelayMs = 400;
    await rig.countdowns.arm({ sessionId: S, attempt: 0, delayMs: 0, detail: {} });
    await rig.countdowns.arm({ sessionId: other, attempt: 0, delayMs: 0, detail: {} });
    await pass(1000);
    const fired = (sessionId: string) => rows.audit(sessionId).find((r) => r.event === "fired")?.detail;
    // The first ran at once; the second waited for the whole first attempt (its read and its prompt call).
    expect(fired(S)).toMatchObject({ queuedMs: 0, checkMs: 400 });
    expect(fired(other)).toMatchObject({ checkMs: 400 });
    expect(fired(other)?.queuedMs).toBeGreaterThanOrEqual(400);
  });
});
