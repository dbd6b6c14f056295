// The reconciler settles continuations whose outcome the enforcer does not know by looking for them in the session. It
// promises: before a new continuation goes out, an earlier `failed` or `unknown` one of the last hour that is in the
// session's messages becomes `sent` (and is returned, so nothing is sent on top of it); a `pending` row whose owner is
// gone, or silent past the lease it took for the call, is settled — `sent` with what it was sent with if found (by its
// message id or the id its text carries), else `unknown`, counted, with the retry armed or, with the retries spent, the
// user told; a session that cannot be read leaves it pending for a later pass; a row of this process is left alone
// while an attempt of its session is under way here; nothing is done while the engine is not deciding. Built from the
// delivery group's real parts over a real SQLite file (test/support/delivery-rig.ts).
import { describe, expect, it, vi } from "vitest";
import { recordOutcome } from "../../../src/store/changes/record-outcome.js";
import {
  armed,
  attempt,
  BASE_MS,
  build,
  failures,
  pass,
  pendingLeftBy,
  presetFailures,
  rig,
  rows,
  S,
  store,
  useDeliveryRig,
} from "../../support/delivery-rig.js";
import { until } from "../../support/fake-time.js";
import { deadOwner, liveOwner, remoteOwner } from "../../support/engine-context.js";

useDeliveryRig();

describe("an earlier continuation found in the session before the next goes out", () => {
  it.each([
    { age: "exactly an hour", ageMs: 3_600_000, found: true },
    { age: "more than an hour", ageMs: 3_600_001, found: false },
  ])("one $age old is looked for: $found", async ({ ageMs, found }) => {
    build();
    const left = await pendingLeftBy(deadOwner());
    const failed = { kind: "failed", error: "gone", final: false, detail: {} } as const;
    await store.change(recordOutcome(left, failed, Date.now(), rig.ctx.config));
    vi.setSystemTime(left.createdAt + ageMs);
    const messages = { unfinishedQuestion: false, ownInjectionIds: [left.id], ownMessageIds: [] };
    const confirmed = await rig.reconciler.confirmEarlier(S, messages);
    expect(confirmed?.id).toBe(found ? left.id : undefined);
    expect(rows.injections(S)).toMatchObject([{ status: found ? "sent" : "failed" }]);
  });
});

describe("reconciling a `pending` continuation nobody is working on", () => {
  it("found by the message id it was sent with: sent, counted with what it was sent with, nothing sent again", async () => {
    build();
    const onSent = JSON.stringify({ stagnantContinuations: 2, backoffUntil: null });
    const left = await pendingLeftBy(deadOwner(), { messageId: "msg_left_by_id", onSent });
    rig.host.addUserMessage(S, "(no marker in this text)", { id: "msg_left_by_id" });
    await rig.reconciler.reconcilePending();
    await pass();
    expect(rows.injections(S)).toMatchObject([{ id: left.id, status: "sent" }]);
    expect(rows.audit(S).at(-1)).toMatchObject({
      event: "reconciled",
      reason: "found",
      detail: { injectionId: left.id, countdownId: left.countdownId, owner: left.owner },
    });
    expect(rows.session(S)).toMatchObject({ continuations: 1, stagnant_continuations: 2 });
    expect(armed()).toEqual([]);
    expect(rig.host.calls.prompt).toBe(0);
  });

  it("not found: `unknown`, counted, not_found with the retry plan, and the retry armed and sent", async () => {
    build();
    const left = await pendingLeftBy(deadOwner());
    await rig.reconciler.reconcilePending();
    await pass();
    expect(rows.injections(S)).toMatchObject([
      { status: "unknown", error: "not found in the session after a restart" },
    ]);
    expect(rows.audit(S).find((r) => r.event === "reconciled")).toMatchObject({
      reason: "not_found",
      detail: { injectionId: left.id, attempt: 1, retryInMs: BASE_MS },
    });
    expect(rows.session(S)).toMatchObject({ continuations: 1, consecutive_failures: 1 });
    const [retry] = armed();
    expect(retry).toMatchObject({ attempt: 1 });
    expect((retry!.deadline_at as number) - (retry!.armed_at as number)).toBe(BASE_MS);
    expect(rows.audit(S).at(-1)).toMatchObject({ event: "armed", detail: { retryOf: left.id, reason: "not_found" } });
    await pass(BASE_MS);
    expect(rig.host.prompts).toHaveLength(1);
    expect(rows.injections(S).map((i) => i.status)).toEqual(["unknown", "sent"]);
  });

  it("not found with the retries spent: gave up, the user told, nothing armed", async () => {
    build({ maxRetries: 1 });
    await presetFailures(1);
    await pendingLeftBy(deadOwner());
    await rig.reconciler.reconcilePending();
    await pass();
    expect(rows.audit(S).find((r) => r.event === "reconciled")).toMatchObject({
      reason: "not_found",
      detail: { attempt: 2, final: true },
    });
    expect(armed()).toEqual([]);
    expect(rows.session(S)).toMatchObject({ notified_stop: "gave_up" });
    expect(rig.host.toasts).toHaveLength(1);
  });

  it("a session that cannot be read leaves it pending; a later pass settles it", async () => {
    build();
    await pendingLeftBy(deadOwner());
    rig.host.messagesBehaviour = "fail";
    await rig.reconciler.reconcilePending();
    await pass();
    expect(rows.injections(S)).toMatchObject([{ status: "pending" }]);
    expect(rows.audit(S).map((r) => r.event)).not.toContain("reconciled");
    expect(rig.host.logs).toContainEqual(
      expect.objectContaining({ level: "warn", message: "cannot reconcile a pending continuation yet" }),
    );
    rig.host.messagesBehaviour = "ok";
    await rig.reconciler.reconcilePending();
    await pass();
    expect(rows.injections(S)).toMatchObject([{ status: "unknown" }]);
  });

  // Only a row whose owner is gone, or silent past the lease it took for the call, is this process's to settle.
  it.each([
    { owner: "a dead process, within its lease", make: deadOwner, leaseMs: 60_000, settled: true },
    {
      owner: "a live process on another host, within its lease",
      make: () => remoteOwner(),
      leaseMs: 60_000,
      settled: false,
    },
    { owner: "a live process on another host, past its lease", make: () => remoteOwner(), leaseMs: -1, settled: true },
    { owner: "a live engine of this host, within its lease", make: liveOwner, leaseMs: 60_000, settled: false },
  ])("left by $owner: settled $settled", async ({ make, leaseMs, settled }) => {
    build();
    await pendingLeftBy(make(), { leaseUntil: Date.now() + leaseMs });
    await rig.reconciler.reconcilePending();
    await pass();
    expect(rows.injections(S)).toMatchObject([{ status: settled ? "unknown" : "pending" }]);
  });

  it("this process's own row is settled only when no attempt of the session is under way here", async () => {
    build({ promptTimeoutMs: 30_000 });
    rig.host.promptDefault = "hang";
    await attempt();
    await until(() => rig.host.calls.prompt === 1);
    expect(rows.injections(S)).toMatchObject([{ status: "pending", owner: rig.ctx.owner }]);
    const reads = rig.host.calls.messages;
    await rig.reconciler.reconcilePending();
    expect(rig.host.calls.messages).toBe(reads);
    expect(rows.injections(S)).toMatchObject([{ status: "pending" }]);
    // The call's own outcome is what gets recorded, not a reconciliation racing it.
    await pass(30_000 + 300);
    expect(rows.injections(S)).toMatchObject([{ status: "unknown" }]);
    expect(failures()).toMatchObject([{ reason: "timeout" }]);
    expect(rows.audit(S).map((r) => r.event)).not.toContain("reconciled");

    // Left pending by this very process (the store paused mid-call) and nothing under way: settled like any other.
    await pendingLeftBy(rig.ctx.owner, { sessionId: "ses_mine" });
    await rig.reconciler.reconcilePending();
    await pass();
    expect(rows.injections("ses_mine")).toMatchObject([{ status: "unknown" }]);
  });

  it("does nothing while the engine is not deciding (the store paused)", async () => {
    build();
    await pendingLeftBy(deadOwner());
    rig.ctx.lifecycle.enter("paused_store");
    await rig.reconciler.reconcilePending();
    expect(rig.host.calls.messages).toBe(0);
    expect(rows.injections(S)).toMatchObject([{ status: "pending" }]);
  });
});
