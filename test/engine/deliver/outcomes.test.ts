// Outcomes records what became of a continuation and does what the record asks next. It promises: an outcome is
// recorded once (of two writers, one does; the second learns it was too late); the retry the plan asks for is armed
// for when its backoff ends, with what it retries and why, unless something counts down for the session already or
// the engine is ending; a plan that gave up arms nothing and tells the user once; a sent continuation whose turn never
// started is a failed attempt (`injection_failed: not_started` with the retry plan, the retry armed), counted once
// however often it is reported. Over a real SQLite file, with the countdowns and stop notices the enforcer gives it
// (test/support/delivery-rig.ts).
import { describe, expect, it } from "vitest";
import {
  armed,
  BASE_MS,
  build,
  failures,
  GIVE_UP,
  pendingLeftBy,
  presetFailures,
  rig,
  rows,
  S,
  useDeliveryRig,
} from "../../support/delivery-rig.js";
import { deadOwner } from "../../support/engine-context.js";

useDeliveryRig();

describe("retry", () => {
  it("arms the retry the plan asks for, with what it retries", async () => {
    build();
    await rig.outcomes.retry(
      S,
      { retry: true, attempt: 2, delayMs: 4000 },
      { open: 1, total: 2, completed: 1 },
      {
        retryOf: "inj_x",
        reason: "backoff",
      },
    );
    const [retry] = armed();
    expect(retry).toMatchObject({ attempt: 2, todos_open: 1, todos_total: 2 });
    expect((retry!.deadline_at as number) - (retry!.armed_at as number)).toBe(4000);
  });

  it("arms nothing when something counts down for the session already, and nothing once the engine is ending", async () => {
    build();
    await rig.countdowns.arm({ sessionId: S, attempt: 0, delayMs: 2000, detail: {} });
    const plan = { retry: true, attempt: 1, delayMs: 1000 } as const;
    await rig.outcomes.retry(S, plan, undefined, { retryOf: "inj_x", reason: "backoff" });
    expect(rows.countdowns(S)).toMatchObject([{ state: "armed", attempt: 0 }]);
    rig.ctx.lifecycle.enter("disposing");
    await rig.outcomes.retry("ses_other", plan, undefined, GIVE_UP);
    await rig.outcomes.retry("ses_other", { retry: false, attempt: 4 }, undefined, GIVE_UP);
    expect(rows.countdowns("ses_other")).toEqual([]);
    // The one toast is the first countdown's: no second countdown, no notice that it gave up.
    expect(rig.host.toasts.map((toast) => toast.message)).toEqual(["Resuming in 2s…"]);
  });
});

describe("record", () => {
  it("records an outcome once: the second writer learns it was too late, and nothing of it is written", async () => {
    build();
    const left = await pendingLeftBy(deadOwner());
    const failed = { kind: "failed", error: "prompt: HTTP 503 unavailable", final: false, detail: {} } as const;
    expect(await rig.outcomes.record(left, failed)).toEqual({ next: { retry: true, attempt: 1, delayMs: BASE_MS } });
    expect(await rig.outcomes.record(left, { kind: "sent", latencyMs: 12, detail: {} })).toBeUndefined();
    expect(rows.injections(S)).toMatchObject([{ status: "failed", error: "prompt: HTTP 503 unavailable" }]);
    expect(rows.audit(S).map((r) => r.event)).toEqual(["armed", "fired", "injection_failed"]);
    expect(rows.session(S)).toMatchObject({ continuations: 0, consecutive_failures: 1 });
  });
});

describe("notStarted", () => {
  /** A continuation of S that went out (`sent`) and whose turn is then reported as never started. */
  async function sentLeft() {
    const left = await pendingLeftBy(deadOwner());
    await rig.outcomes.record(left, { kind: "sent", latencyMs: 12, detail: {} });
    return left;
  }

  it("is a failed attempt: not_started with the retry plan, the retry armed; counted once however often reported", async () => {
    build();
    const left = await sentLeft();
    expect(rig.outcomes.countedNotStarted(left.id)).toBe(false);
    await rig.outcomes.notStarted(S, left.id, 12_345.6);
    expect(rig.outcomes.countedNotStarted(left.id)).toBe(true);
    expect(failures()).toMatchObject([
      {
        reason: "not_started",
        detail: { injectionId: left.id, waitedMs: 12_346, attempt: 1, retryInMs: BASE_MS },
      },
    ]);
    expect(rows.session(S)).toMatchObject({ continuations: 1, consecutive_failures: 1, recheck_at: null });
    const [retry] = armed();
    expect(retry).toMatchObject({ attempt: 1 });
    expect((retry!.deadline_at as number) - (retry!.armed_at as number)).toBe(BASE_MS);
    expect(rows.audit(S).at(-1)).toMatchObject({ event: "armed", detail: { retryOf: left.id, reason: "not_started" } });

    // The start watch and a look after a restart may both report it.
    await rig.outcomes.notStarted(S, left.id, 20_000);
    expect(failures()).toHaveLength(1);
    expect(rows.session(S)).toMatchObject({ consecutive_failures: 1 });
    expect(rig.host.logs.filter((l) => l.message === "continuation accepted but its turn never started")).toHaveLength(
      1,
    );
  });

  it("with the retries spent: gave up, nothing armed, the user told", async () => {
    build({ maxRetries: 1 });
    await presetFailures(1);
    const left = await sentLeft();
    await rig.outcomes.notStarted(S, left.id, 10_000);
    expect(failures()).toMatchObject([{ reason: "not_started", detail: { attempt: 2, final: true } }]);
    expect(armed()).toEqual([]);
    expect(rows.session(S)).toMatchObject({ consecutive_failures: 2, notified_stop: "gave_up" });
    expect(rig.host.toasts).toMatchObject([
      { variant: "warning", message: expect.stringMatching(/^Stopped: sending failed 2 times\./) },
    ]);
  });
});
