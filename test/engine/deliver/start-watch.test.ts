// StartWatch makes sure a sent continuation's turn starts. It promises: a sign of the turn running (while the call was
// made, or after) confirms the start: the failures in a row are over (consecutive_failures 0) and the look owed for it
// is cleared (recheck_at), and OpenCode is not asked; without a sign within startTimeoutMs OpenCode is asked: a turn
// that started, or an OpenCode that cannot be read (no verdict), confirms it; a turn that never started is a failed
// attempt, `injection_failed: not_started` with the retry plan and the retry armed; a sign that comes while OpenCode is
// being asked wins; nothing is asked while the engine is not deciding; a dropped watch (and every watch, on clear) is
// neither asked about nor confirmed. A look after a restart finds the same failure from the session's messages
// (unstartedContinuation): only for the last continuation this session sent, unanswered, the session idle, not armed
// here, past the start timeout, and counted once whoever saw it first. Over a real SQLite file, with the outcomes,
// countdowns and OpenCode reads the enforcer gives it (test/support/delivery-rig.ts).
import { describe, expect, it } from "vitest";
import { renderPrompt } from "../../../src/core/prompt.js";
import { recordOutcome } from "../../../src/store/changes/record-outcome.js";
import type { SessionStatus } from "../../../src/core/events.js";
import {
  armed,
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
import { advance, until } from "../../support/fake-time.js";

useDeliveryRig();

const START_TIMEOUT_MS = 10_000;
const OTHER = "ses_other";
const TODOS = [
  { content: "a", status: "pending" },
  { content: "b", status: "pending" },
];

/**
 * A continuation of S this process sent 3 s ago (its row `sent`, the session owing a look for its start), and the
 * message OpenCode wrote for it. `rowSession`: the row belongs to that session instead; `messageId`: OpenCode's message
 * has that id instead of ours; `pending`: its outcome was never recorded.
 */
async function sentContinuation(options: { rowSession?: string; messageId?: string; pending?: boolean } = {}) {
  const left = await pendingLeftBy(rig.ctx.owner, { sessionId: options.rowSession ?? S });
  if (!options.pending)
    await store.change(recordOutcome(left, { kind: "sent", latencyMs: 5, detail: {} }, Date.now(), rig.ctx.config));
  rig.host.addUserMessage(S, renderPrompt(TODOS, left.id), { id: options.messageId ?? left.messageId! });
  return left;
}

/** A watched continuation of S, with two failures in a row before it. */
async function watched(startedMeanwhile = false) {
  build({ startTimeoutMs: START_TIMEOUT_MS });
  await presetFailures(2);
  const sent = await sentContinuation();
  expect(rows.session(S)).toMatchObject({ consecutive_failures: 2, recheck_at: Date.now() + START_TIMEOUT_MS });
  rig.starts.watch(S, sent.id, sent.messageId!, startedMeanwhile);
  return sent;
}

const confirmed = () => expect(rows.session(S)).toMatchObject({ consecutive_failures: 0, recheck_at: null });

describe("a sign of the turn running", () => {
  it("after the call confirms the start: failures in a row over, the owed look cleared, OpenCode not asked later", async () => {
    await watched();
    expect(rig.starts.has(S)).toBe(true);
    rig.starts.confirm(S);
    expect(rig.starts.has(S)).toBe(false);
    await pass();
    confirmed();
    const reads = rig.host.calls.messages;
    await pass(START_TIMEOUT_MS);
    expect(rig.host.calls.messages).toBe(reads);
    expect(failures()).toEqual([]);
  });

  it("during the call confirms it at once", async () => {
    await watched(true);
    expect(rig.starts.has(S)).toBe(false);
    await pass();
    confirmed();
    const reads = rig.host.calls.messages;
    await pass(START_TIMEOUT_MS);
    expect(rig.host.calls.messages).toBe(reads);
    expect(failures()).toEqual([]);
  });

  it("of a session not watched confirms nothing", async () => {
    build({ startTimeoutMs: START_TIMEOUT_MS });
    await presetFailures(2);
    rig.starts.watch(OTHER, "inj_other_0001", "msg_other", false);
    rig.starts.confirm(S);
    await pass();
    expect(rows.session(S)).toMatchObject({ consecutive_failures: 2 });
    expect(rig.starts.has(OTHER)).toBe(true);
  });
});

describe("no sign within startTimeoutMs: OpenCode is asked", () => {
  it.each([
    { answer: "the session is busy", set: () => void (rig.host.statuses[S] = "busy" as SessionStatus) },
    { answer: "an answer follows our message", set: () => void rig.host.addAssistantMessage(S) },
    {
      answer: "OpenCode cannot be read (no verdict)",
      set: () => {
        rig.host.statusBehaviour = "fail";
        rig.host.messagesBehaviour = "fail";
      },
    },
  ])("$answer: confirmed", async ({ set }) => {
    await watched();
    set();
    const reads = rig.host.calls.messages;
    await pass(START_TIMEOUT_MS - 1);
    expect(rig.host.calls.messages).toBe(reads);
    await pass(1);
    expect(rig.host.calls.messages).toBe(reads + 1);
    confirmed();
    expect(failures()).toEqual([]);
    expect(rig.starts.has(S)).toBe(false);
  });

  it("the turn never started: injection_failed not_started with the retry plan, and the retry armed", async () => {
    const sent = await watched();
    await pass(START_TIMEOUT_MS);
    expect(failures()).toMatchObject([
      {
        reason: "not_started",
        detail: { injectionId: sent.id, waitedMs: START_TIMEOUT_MS, attempt: 3, retryInMs: 4000 },
      },
    ]);
    expect(rows.session(S)).toMatchObject({ consecutive_failures: 3, recheck_at: null });
    expect(armed()).toMatchObject([{ attempt: 3 }]);
    expect(rows.audit(S).at(-1)).toMatchObject({
      event: "armed",
      detail: { attempt: 3, retryOf: sent.id, reason: "not_started" },
    });
    expect(rig.host.logs).toContainEqual(
      expect.objectContaining({ level: "warn", message: "continuation accepted but its turn never started" }),
    );
    expect(rig.starts.has(S)).toBe(false);
  });

  it("a sign that comes while OpenCode is being asked wins over its answer", async () => {
    await watched();
    let asked = false;
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    const read = rig.host.getStatuses.bind(rig.host);
    rig.host.getStatuses = async (signal) => {
      asked = true;
      await held;
      return read(signal);
    };
    await advance(START_TIMEOUT_MS);
    await until(() => asked);
    rig.starts.confirm(S);
    answer();
    await pass();
    confirmed();
    expect(failures()).toEqual([]);
  });

  it("nothing is asked or recorded while the engine is not deciding (the store paused)", async () => {
    await watched();
    rig.ctx.lifecycle.enter("paused_store");
    const reads = rig.host.calls.messages;
    await pass(START_TIMEOUT_MS);
    expect(rig.host.calls.messages).toBe(reads);
    expect(failures()).toEqual([]);
    expect(rows.session(S)).toMatchObject({ consecutive_failures: 2 });
  });
});

describe("drop and clear", () => {
  it("drop stops watching (true if it was): no question at the timeout, and a later sign confirms nothing", async () => {
    await watched();
    expect(rig.starts.drop(S)).toBe(true);
    expect(rig.starts.drop(S)).toBe(false);
    expect(rig.starts.has(S)).toBe(false);
    const reads = rig.host.calls.messages;
    await pass(START_TIMEOUT_MS);
    expect(rig.host.calls.messages).toBe(reads);
    rig.starts.confirm(S);
    await pass();
    expect(rows.session(S)).toMatchObject({ consecutive_failures: 2 });
    expect(failures()).toEqual([]);
  });

  it("clear drops every watch", async () => {
    await watched();
    rig.starts.watch(OTHER, "inj_other_0001", "msg_other", false);
    rig.starts.clear();
    expect(rig.starts.has(S)).toBe(false);
    expect(rig.starts.has(OTHER)).toBe(false);
    const reads = rig.host.calls.messages;
    await pass(START_TIMEOUT_MS);
    expect(rig.host.calls.messages).toBe(reads);
    expect(failures()).toEqual([]);
  });
});

describe("unstartedContinuation, on a look after a restart or a missed event", () => {
  /** What a look reads of S, and unstartedContinuation's verdict on it, in the session's lane as a look runs it. */
  async function look(armedHere = false) {
    const facts = await rig.facts.gather(S);
    return rig.ctx.lanes.run(S, () => rig.starts.unstartedContinuation(S, facts, armedHere));
  }

  it("our last sent continuation, unanswered, the session idle, past the start timeout: not_started, counted once", async () => {
    build({ startTimeoutMs: START_TIMEOUT_MS });
    const sent = await sentContinuation();
    rig.starts.watch(S, sent.id, sent.messageId!, false);
    // Sent 3 s ago: the start timeout is over 7 s from now.
    await advance(START_TIMEOUT_MS - 3000 - 1);
    expect(await look()).toBe(false);
    expect(failures()).toEqual([]);
    await advance(1);
    expect(await look()).toBe(true);
    expect(failures()).toMatchObject([
      { reason: "not_started", detail: { injectionId: sent.id, waitedMs: START_TIMEOUT_MS, attempt: 1 } },
    ]);
    expect(armed()).toMatchObject([{ attempt: 1 }]);
    expect(rows.audit(S).at(-1)).toMatchObject({ event: "armed", detail: { retryOf: sent.id, reason: "not_started" } });
    // The watch it replaces is dropped: its own timeout counts nothing more.
    expect(rig.starts.has(S)).toBe(false);
    expect(await look()).toBe(false);
    await pass(START_TIMEOUT_MS);
    expect(failures()).toHaveLength(1);
  });

  it("is not counted again after the watch counted it", async () => {
    build({ startTimeoutMs: START_TIMEOUT_MS });
    const sent = await sentContinuation();
    rig.starts.watch(S, sent.id, sent.messageId!, false);
    await pass(START_TIMEOUT_MS);
    expect(failures()).toHaveLength(1);
    expect(await look()).toBe(false);
    expect(failures()).toHaveLength(1);
  });

  it.each([
    { when: "none of the below (the control)", counted: true },
    { when: "its turn was answered", prepare: () => void rig.host.addAssistantMessage(S), counted: false },
    {
      when: "the session is busy",
      prepare: () => void (rig.host.statuses[S] = "busy" as SessionStatus),
      counted: false,
    },
    { when: "the messages cannot be read", prepare: () => void (rig.host.messagesBehaviour = "fail"), counted: false },
    { when: "a countdown of the session is armed here", armedHere: true, counted: false },
    { when: "its row is still pending (the call's outcome is not known)", sent: { pending: true }, counted: false },
    { when: "the row its text names belongs to another session", sent: { rowSession: OTHER }, counted: false },
    {
      when: "the message carrying its id is not the one it was sent as",
      sent: { messageId: "msg_quoted_later" },
      counted: false,
    },
  ])("$when: counted $counted", async (c) => {
    build({ startTimeoutMs: START_TIMEOUT_MS });
    await sentContinuation(c.sent);
    c.prepare?.();
    await advance(START_TIMEOUT_MS);
    const facts = await rig.facts.gather(S);
    const verdict = await rig.ctx.lanes.run(S, () => rig.starts.unstartedContinuation(S, facts, c.armedHere ?? false));
    expect(verdict).toBe(c.counted);
    await pass();
    expect(failures()).toHaveLength(c.counted ? 1 : 0);
    expect(armed()).toHaveLength(c.counted ? 1 : 0);
  });
});
