// NoticeSender promises: a stop told with channels reaches each channel that takes its kind once, its row `sent` and
// a `notified` audit row; a receiver that is down is tried again after 5 s, 10 s… and gets the notice once it is back,
// each failed attempt a `notice_failed` row; one that refuses for good is given up at once; notices left in the outbox
// (a restart, a process that died holding one) go once their owner's lease is out; a newer notice of the session stands
// for the older ones still waiting, which are folded into it; `noticesPerHour` holds the rest until the hour frees; of
// two processes on one file, one sends each notice; the body carries the session's title from OpenCode; without
// channels nothing reads the outbox; stop() (the engine's root calls it) waits for the round in flight, and nothing is
// read after it. Built from the engine's real parts (parts.ts) over a real SQLite file, on fake timers, with a channel
// that records what it is handed.
import { describe, expect, it } from "vitest";
import type { AttemptResult } from "../../src/core/notice-delivery.js";
import { noticeLines, type Notice, type NoticeKind } from "../../src/core/notices.js";
import type { NoticeChannels } from "../../src/engine/notice-sender.js";
import type { EngineParts } from "../../src/engine/parts.js";
import { claimNotices } from "../../src/store/changes/claim-notices.js";
import type { EngineStore } from "../../src/store/port.js";
import type { Change } from "../../src/store/script.js";
import { connection, deadOwner, quiet, rows, store, type TestContext } from "../support/engine-context.js";
import { DIRECTORY } from "../support/engine-fixture.js";
import { deferred } from "../support/deferred.js";
import { advance, until } from "../support/fake-time.js";
import { buildPartsRig, useParts } from "../support/parts-rig.js";

const S = "ses_notices";
const ALL: NoticeKind[] = ["question", "budget", "stuck", "done", "error"];

interface Delivery {
  channel: string;
  notice: Notice;
  at: number;
}

/** Channels that record each delivery and answer what `answer` says (ok by default). */
class RecordingChannels implements NoticeChannels {
  readonly deliveries: Delivery[] = [];
  answer: (delivery: Delivery) => AttemptResult = () => ({ ok: true });
  /** Each delivery answers once this settles (a receiver slow to answer). */
  answersAfter: Promise<void> = Promise.resolve();
  constructor(readonly channels: NoticeChannels["channels"]) {}
  async deliver(channel: string, notice: Notice): Promise<AttemptResult> {
    const delivery = { channel, notice, at: Date.now() };
    this.deliveries.push(delivery);
    await this.answersAfter;
    return this.answer(delivery);
  }
}

const hook = (name = "hook", kinds: NoticeKind[] = ALL) => ({ name, type: "webhook", kinds, timeoutMs: 1000 });

function build(channels = new RecordingChannels([hook()]), config = {}) {
  const rig = buildPartsRig({ noticeChannels: channels, config: { leaseMs: 3000, ...config } });
  return { ...rig, channels };
}

/** A stop told as the engine tells one that no skip decides, and the sender left to do what it does now. */
async function tellStop(ctx: TestContext, parts: EngineParts, reason = "gave_up", detail: object = { failures: 3 }) {
  await parts.notices.tell(S, reason, { ...detail });
  await quiet(ctx);
}

const noticeRows = () =>
  connection.raw.all<Record<string, unknown> & { state: string; attempts: number }>(
    "SELECT * FROM notices ORDER BY created_at, id",
  );
const trail = () => rows.trail(S).filter((entry) => entry.startsWith("noti"));

function countChanges(over: EngineStore, name: string): () => number {
  let calls = 0;
  const original = over.change.bind(over);
  over.change = (<T>(change: Change<T>) => {
    if (change.name === name) calls++;
    return original(change);
  }) as EngineStore["change"];
  return () => calls;
}

useParts();

describe("a stop told with channels", () => {
  it("reaches each channel that takes its kind once, its row sent, a notified row", async () => {
    const { ctx, parts, channels } = build(new RecordingChannels([hook("all"), hook("questions", ["question"])]));
    parts.sender.start();
    await tellStop(ctx, parts);
    expect(channels.deliveries.map((d) => [d.channel, d.notice.kind, d.notice.reason, d.notice.text])).toEqual([
      ["all", "stuck", "gave_up", "Stopped: sending failed 3 times."],
    ]);
    expect(noticeRows().map((r) => [r.channel, r.state, r.attempts])).toEqual([["all", "sent", 1]]);
    expect(trail()).toEqual(["notified:stuck"]);
    await advance(60_000);
    expect(channels.deliveries).toHaveLength(1);
  });

  it("carries the session's title as OpenCode tells it", async () => {
    const { ctx, parts, channels, host } = build();
    host.sessions.set(S, { id: S, title: "Refactor the parser" });
    parts.sender.start();
    await tellStop(ctx, parts);
    expect(channels.deliveries[0]!.notice.session).toEqual({ id: S, title: "Refactor the parser" });
  });

  it("links to the session's page where dashboardUrl is set", async () => {
    const { ctx, parts, channels } = build(undefined, { dashboardUrl: "https://tc.example.test/board" });
    parts.sender.start();
    await tellStop(ctx, parts);
    expect(channels.deliveries[0]!.notice.session.url).toBe(`https://tc.example.test/board/session/${S}`);
    expect(noticeLines(channels.deliveries[0]!.notice)).toContain(
      `Its page: https://tc.example.test/board/session/${S}`,
    );
  });
});

describe("a receiver that fails", () => {
  it("down for a while: tried again after 5 s and 10 s, sent once it is back", async () => {
    const { ctx, parts, channels } = build();
    let down = 2;
    channels.answer = () => (down-- > 0 ? { ok: false, retryable: true, error: "503 from hooks.test" } : { ok: true });
    parts.sender.start();
    await tellStop(ctx, parts);
    const first = channels.deliveries[0]!.at;
    await advance(20_000);
    await quiet(ctx);
    expect(channels.deliveries.map((d) => d.at - first)).toEqual([0, 5000, 15_000]);
    expect(trail()).toEqual(["notice_failed:stuck", "notice_failed:stuck", "notified:stuck"]);
    const failed = rows.audit(S).filter((r) => r.event === "notice_failed");
    expect(failed.map((r) => [r.detail.retryInMs, r.detail.error, r.detail.channelType])).toEqual([
      [5000, "503 from hooks.test", "webhook"],
      [10_000, "503 from hooks.test", "webhook"],
    ]);
    expect(noticeRows().map((r) => [r.state, r.attempts])).toEqual([["sent", 3]]);
  });

  it("refusing for good: given up at once, never tried again", async () => {
    const { ctx, parts, channels } = build();
    channels.answer = () => ({ ok: false, retryable: false, error: "404 from hooks.test" });
    parts.sender.start();
    await tellStop(ctx, parts);
    await advance(600_000);
    expect(channels.deliveries).toHaveLength(1);
    expect(noticeRows().map((r) => [r.state, r.last_error])).toEqual([["failed", "404 from hooks.test"]]);
    expect(rows.audit(S).find((r) => r.event === "notice_failed")?.detail.final).toBe(true);
  });
});

describe("notices left in the outbox", () => {
  it("written while no sender ran (a restart) go when one starts", async () => {
    const { ctx, parts, channels } = build();
    await tellStop(ctx, parts);
    expect(channels.deliveries).toEqual([]);
    parts.sender.start();
    await quiet(ctx);
    expect(channels.deliveries).toHaveLength(1);
  });

  it("held by a process that died go once its lease is out, not before", async () => {
    const { ctx, parts, channels } = build();
    await tellStop(ctx, parts);
    await store.change(claimNotices({ directory: DIRECTORY }, ["hook"], deadOwner(), Date.now(), 8000, 10));
    parts.sender.start();
    await quiet(ctx);
    expect(channels.deliveries).toEqual([]);
    await advance(10_000);
    await quiet(ctx);
    expect(channels.deliveries).toHaveLength(1);
  });

  it("of two processes on one file, one sends each notice", async () => {
    const channels = new RecordingChannels([hook()]);
    const one = build(channels);
    const two = build(channels);
    one.parts.sender.start();
    two.parts.sender.start();
    await tellStop(one.ctx, one.parts);
    await tellStop(one.ctx, one.parts, "stagnation", { unproductiveContinuations: 3 });
    await advance(10_000);
    await quiet(one.ctx);
    await quiet(two.ctx);
    expect(channels.deliveries.map((d) => d.notice.reason).sort()).toEqual(["gave_up", "stagnation"]);
  });
});

describe("several notices of one session", () => {
  it("the newest stands for the older ones still waiting: one delivery, the others folded into it", async () => {
    const { ctx, parts, channels } = build();
    await tellStop(ctx, parts, "gave_up");
    await advance(1000);
    await tellStop(ctx, parts, "stagnation", { unproductiveContinuations: 3 });
    parts.sender.start();
    await quiet(ctx);
    expect(channels.deliveries).toHaveLength(1);
    const [sent] = channels.deliveries;
    expect(sent!.notice.reason).toBe("stagnation");
    expect(sent!.notice.folded?.map((f) => [f.reason, f.text])).toEqual([
      ["gave_up", "Stopped: sending failed 3 times."],
    ]);
    expect(noticeRows().map((r) => r.state)).toEqual(["folded", "sent"]);
  });

  it("noticesPerHour sent, the next waits for the hour to free, folding what came meanwhile", async () => {
    const { ctx, parts, channels } = build(undefined, { noticesPerHour: 2 });
    parts.sender.start();
    const reasons = ["gave_up", "stagnation", "budget_exhausted", "gave_up"];
    for (const reason of reasons) {
      await tellStop(ctx, parts, reason, { failures: 3, unproductiveContinuations: 3, continuations: 20 });
      await advance(60_000);
    }
    expect(channels.deliveries.map((d) => d.notice.reason)).toEqual(["gave_up", "stagnation"]);
    await advance(3_600_000);
    await quiet(ctx);
    expect(channels.deliveries.map((d) => d.notice.reason)).toEqual(["gave_up", "stagnation", "gave_up"]);
    expect(channels.deliveries[2]!.notice.folded?.map((f) => f.reason)).toEqual(["budget_exhausted"]);
    expect(channels.deliveries[2]!.at - channels.deliveries[0]!.at).toBeGreaterThanOrEqual(3_600_000);
  });
});

describe("stop()", () => {
  it("waits for the round in flight: its delivery is recorded before it resolves, and no round comes after", async () => {
    const { ctx, parts, channels } = build();
    const slow = deferred<void>();
    channels.answersAfter = slow.promise;
    await parts.sender.start();
    await parts.notices.tell(S, "gave_up", { failures: 3 });
    await until(() => channels.deliveries.length === 1);
    let stopped = false;
    const stopping = parts.sender.stop().then(() => (stopped = true));
    await advance(0);
    expect(stopped).toBe(false);
    slow.resolve();
    await stopping;
    expect(noticeRows().map((r) => r.state)).toEqual(["sent"]);
    expect(trail()).toEqual(["notified:stuck"]);
    // A notice told after the stop wakes nothing: it waits in the outbox for the next process's sender.
    await tellStop(ctx, parts, "stagnation", { unproductiveContinuations: 3 });
    await advance(60_000);
    expect(channels.deliveries).toHaveLength(1);
    // Both written at the same (fake) time: their order is their random ids'.
    expect(
      noticeRows()
        .map((r) => r.state)
        .sort(),
    ).toEqual(["pending", "sent"]);
  });

  it("two at once wait for the same stop; a start after it is refused", async () => {
    const { parts } = build();
    await parts.sender.start();
    const [first, second] = [parts.sender.stop(), parts.sender.stop()];
    expect(second).toBe(first);
    await first;
    await expect(parts.sender.start()).rejects.toThrow("the notice sender was stopped: it cannot start again");
  });
});

describe("without channels", () => {
  it("nothing reads the outbox, and a stop still tells its toast", async () => {
    const rig = buildPartsRig({ config: { leaseMs: 3000 } });
    const claims = countChanges(store, "claim-notices");
    rig.parts.sender.start();
    await tellStop(rig.ctx, rig.parts);
    await advance(60_000);
    expect(claims()).toBe(0);
    expect(noticeRows()).toEqual([]);
    expect(rig.host.toasts).toHaveLength(1);
  });
});
