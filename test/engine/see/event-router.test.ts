// EventRouter promises: each OpenCode bus event updates what this process remembers of its session and hands what it
// changes to the part that owns it. Streamed output (deltas, parts) ends the countdown of its own session only — never
// another session's, never for the parts of a user message; an idle hands the session to the looks; busy or retry ends
// the countdown (busy / recovering), and so does a session error (session_error), whose error is written to the
// session's row; a tool running ends it (tool_activity); a person's message — once a part says it is one — starts the
// loop protections over and, after one of our continuations while work was open, pauses the session; within the grace
// period after arming it is taken for an echo and the countdown goes on; a deleted session's stop is lifted; question
// and permission requests are remembered until answered; a compaction lifts the token limit. While the store is paused,
// observe() keeps only the live facts in memory (no row is written, no countdown ended) and owes the idles a look.
// Events it cannot read are counted as ignored. Built here from the engine's real parts (Countdowns, Looks, StartWatch,
// wired as in enforcer.ts) over the engine's context and a real SQLite file, on fake timers.
import { describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/resolve.js";
import type { OwnMessageIds } from "../../../src/engine/memory/own-messages.js";
import type { Looks } from "../../../src/engine/decide/looks.js";
import type { DeliveryQueue } from "../../../src/engine/wait/queue.js";
import type { StartWatch } from "../../../src/engine/deliver/start-watch.js";
import type { EventRouter } from "../../../src/engine/see/event-router.js";
import type { SessionMemories } from "../../../src/engine/memory/session-memory.js";
import type { Countdowns } from "../../../src/engine/wait/countdowns.js";
import { changeSession } from "../../../src/store/changes/change-session.js";
import { stop } from "../../../src/store/changes/stop.js";
import type { SessionUpdate } from "../../../src/store/port.js";
import { quiet, rows, store, type TestContext } from "../../support/engine-context.js";
import { buildPartsRig, useParts } from "../../support/parts-rig.js";
import { ev } from "../../support/events.js";
import { FakeHost } from "../../support/fake-host.js";
import { advance, START } from "../../support/fake-time.js";

const S = "ses_router";
const OTHER = "ses_bystander";
const GRACE_MS = 500;

let rig: Rig;

interface Rig {
  ctx: TestContext;
  host: FakeHost;
  countdowns: Countdowns;
  memories: SessionMemories;
  looks: Looks;
  starts: StartWatch;
  queue: DeliveryQueue;
  router: EventRouter;
  /** The enforcer's own continuations by message id. */
  ownMessages: OwnMessageIds;
}

/** The parts the enforcer builds around the event router, built the same way (no injector: nothing is sent). */
function build(overrides: Partial<Config> = {}): Rig {
  const { ctx, host, parts } = buildPartsRig({ config: { gracePeriodMs: GRACE_MS, ...overrides } });
  const { countdowns, memories, looks, starts, queue, router, ownMessages } = parts;
  rig = { ctx, host, countdowns, memories, looks, starts, queue, router, ownMessages };
  return rig;
}

/** Waits for every state change and look the events started. */
async function settled(): Promise<void> {
  await quiet(rig.ctx);
}

/** A countdown armed here for `sessionId`, long enough not to come due during the test. */
async function armed(sessionId: string) {
  const countdown = await rig.countdowns.arm({ sessionId, attempt: 0, delayMs: 60_000, detail: { trigger: "test" } });
  expect(countdown).toBeDefined();
  return countdown!;
}

const ended = (sessionId: string) => rows.countdowns(sessionId).filter((c) => c.state !== "armed");
const stillArmed = (sessionId: string) => rows.countdowns(sessionId).filter((c) => c.state === "armed");
const cancellations = (sessionId: string) =>
  rows.audit(sessionId).filter((r) => r.event === "cancelled" && r.reason !== "superseded");

/** A message a person typed: the message, then its text part. */
function personWrites(sessionId: string, messageId: string, text = "Stop. Let me look at the parser first.") {
  rig.router.handle(ev.userMessage(sessionId, messageId));
  rig.router.handle(ev.textPart(sessionId, messageId, text));
}

const preset = (sessionId: string, update: SessionUpdate) =>
  store.change(changeSession(rig.ctx.scope(sessionId), Date.now(), update));

useParts();

describe("streamed output", () => {
  it.each([
    { event: "message.part.delta", raw: (s: string) => ev.delta(s, "msg_assistant") },
    { event: "message.part.updated", raw: (s: string) => ev.partUpdated(s, "msg_assistant") },
  ])("$event ends the countdown of its own session at once, and no other session's", async ({ event, raw }) => {
    const { router, countdowns } = build();
    const mine = await armed(S);
    await armed(OTHER);
    router.handle(raw(S));
    // Out of memory at once: the next streamed part finds nothing to do.
    expect(countdowns.has(S)).toBe(false);
    expect(countdowns.has(OTHER)).toBe(true);
    await settled();
    expect(ended(S)).toMatchObject([{ id: mine.row.id, state: "cancelled", end_reason: "assistant_activity" }]);
    expect(cancellations(S)).toMatchObject([{ detail: { event } }]);
    expect(stillArmed(OTHER)).toHaveLength(1);
  });

  it("a part names its session in the part itself: that one's countdown ends", async () => {
    const { router } = build();
    await armed(S);
    await armed(OTHER);
    const raw = ev.partUpdated(OTHER, "msg_assistant");
    (raw.properties as { sessionID: string }).sessionID = "ses_elsewhere";
    router.handle(raw);
    await settled();
    expect(stillArmed(S)).toHaveLength(1);
    expect(ended(OTHER)).toMatchObject([{ end_reason: "assistant_activity" }]);
  });

  it("the parts of a user message end nothing, streamed or updated", async () => {
    const { router, countdowns } = build();
    await armed(S);
    // Written before this process started: known as a user's message, and no news.
    router.handle(ev.userMessage(S, "msg_earlier", { time: { created: START.getTime() - 60_000 } }));
    router.handle(ev.delta(S, "msg_earlier"));
    router.handle(ev.partUpdated(S, "msg_earlier"));
    router.handle(ev.textPart(S, "msg_earlier", "more of the old message"));
    await settled();
    expect(countdowns.has(S)).toBe(true);
    expect(stillArmed(S)).toHaveLength(1);
    // The assistant's output, in contrast, does.
    router.handle(ev.delta(S, "msg_reply"));
    await settled();
    expect(ended(S)).toMatchObject([{ end_reason: "assistant_activity" }]);
  });

  it("output of a session with nothing counting down writes nothing", async () => {
    const { router } = build();
    router.handle(ev.delta(S));
    router.handle(ev.partUpdated(S));
    await settled();
    expect(rows.session(S)).toBeUndefined();
    expect(rows.audit()).toEqual([]);
    expect(router.eventsIgnored).toBe(0);
  });
});

describe("an idle", () => {
  it("hands the session to the looks, which judge it (here: open todos, so a countdown is armed)", async () => {
    const { router, host, countdowns, memories } = build();
    host.addUserMessage(S, "build the parser");
    host.setTodos(S, [
      ["parse", "in_progress"],
      ["test", "pending"],
    ]);
    router.handle(ev.idle(S));
    expect(memories.peek(S)?.status).toBe("idle");
    await settled();
    expect(rows.audit(S)).toMatchObject([{ event: "armed", detail: { trigger: "idle" } }]);
    expect(countdowns.has(S)).toBe(true);
  });

  it("settles a user message still held, so the look judges it", async () => {
    const { router, host } = build();
    host.addUserMessage(S, "build the parser");
    host.setTodos(S, [["parse", "pending"]]);
    // A partless message (an image only): no part will ever settle it; the idle does, as a person's.
    router.handle(ev.userMessage(S, "msg_image"));
    expect(router.userMessages.held).toBe(1);
    router.handle(ev.idle(S));
    expect(router.userMessages.held).toBe(0);
    await settled();
    expect(rows.session(S)).toMatchObject({ last_user_message_at: START.getTime() });
  });
});

describe("status", () => {
  it.each([
    { status: "busy" as const, reason: "busy" },
    { status: "retry" as const, reason: "recovering" },
  ])("$status ends the countdown with reason $reason, and is remembered", async ({ status, reason }) => {
    const { router, memories } = build();
    await armed(S);
    await armed(OTHER);
    router.handle(ev.status(S, status));
    expect(memories.peek(S)?.status).toBe(status);
    await settled();
    expect(ended(S)).toMatchObject([{ state: "cancelled", end_reason: reason }]);
    expect(cancellations(S)).toMatchObject([{ reason, detail: { status } }]);
    expect(stillArmed(OTHER)).toHaveLength(1);
  });

  it("idle as a status is remembered and ends nothing (the idle event is what is judged)", async () => {
    const { router, memories } = build();
    await armed(S);
    router.handle(ev.status(S, "idle"));
    await settled();
    expect(memories.peek(S)?.status).toBe("idle");
    expect(stillArmed(S)).toHaveLength(1);
    expect(rows.audit(S).filter((r) => r.event !== "armed")).toEqual([]);
  });
});

describe("a session error", () => {
  const overloaded = {
    type: "session.error",
    properties: {
      sessionID: S,
      error: { name: "APIError", data: { message: "Overloaded", statusCode: 529, isRetryable: true } },
    },
  };

  it("ends the countdown with reason session_error and writes the error to the session's row", async () => {
    const { router } = build();
    await armed(S);
    router.handle(overloaded);
    await settled();
    expect(ended(S)).toMatchObject([{ state: "cancelled", end_reason: "session_error" }]);
    expect(cancellations(S)).toMatchObject([
      {
        reason: "session_error",
        detail: { kind: "transient", errorName: "APIError", statusCode: 529, message: "Overloaded" },
      },
    ]);
    expect(rows.session(S)).toMatchObject({
      last_error_at: START.getTime(),
      last_error_name: "APIError",
      last_error_kind: "transient",
      error_streak: 1,
    });
  });

  it("with nothing counting down, the error is written all the same", async () => {
    const { router } = build();
    router.handle(overloaded);
    await settled();
    expect(rows.session(S)).toMatchObject({ last_error_name: "APIError", last_error_kind: "transient" });
    expect(rows.audit(S)).toEqual([]);
  });

  it("an abort is remembered and written as the user's stop of the turn", async () => {
    const { router, memories } = build();
    router.handle(ev.error(S, "MessageAbortedError", "aborted"));
    expect(memories.peek(S)?.abortedAt).toBe(START.getTime());
    await settled();
    expect(rows.session(S)).toMatchObject({ aborted_at: START.getTime(), last_error_kind: "abort" });
  });
});

describe("a person's message", () => {
  it("is held until a part says it is a person's; then the loop protections start over", async () => {
    const { router } = build();
    await preset(S, { stagnantContinuations: 2, unproductiveReplies: 1, consecutiveFailures: 2, errorStreak: 3 });
    router.handle(ev.userMessage(S, "msg_person"));
    router.handle(ev.textPart(S, "msg_person", "(synthetic context)", true));
    await settled();
    expect(rows.session(S)).toMatchObject({ stagnant_continuations: 2, last_user_message_at: null });
    router.handle(ev.textPart(S, "msg_person", "Use SQLite, please."));
    await settled();
    expect(rows.session(S)).toMatchObject({
      last_user_message_at: START.getTime(),
      continuations: 0,
      stagnant_continuations: 0,
      unproductive_replies: 0,
      consecutive_failures: 0,
      error_streak: 0,
      paused_at: null,
      agent: "build",
      model_provider: "scripted",
      model_id: "model-1",
    });
  });

  it("after one of our continuations, with work open, pauses the session (durably, naming the message)", async () => {
    build();
    await preset(S, { continuations: 2 });
    personWrites(S, "msg_stepping_in");
    await settled();
    expect(rows.session(S)).toMatchObject({
      continuations: 0,
      paused_at: START.getTime(),
      pause_message_id: "msg_stepping_in",
    });
  });

  it("after one of our continuations but with every todo closed, is new work: no pause", async () => {
    const { router } = build();
    await preset(S, { continuations: 2 });
    router.handle(ev.todos(S, [["parse", "completed"]]));
    personWrites(S, "msg_new_work", "Now add a CLI.");
    await settled();
    expect(rows.session(S)).toMatchObject({ continuations: 0, paused_at: null, last_user_message_at: START.getTime() });
  });

  it("does not pause when pauseAfterUserMessage is off", async () => {
    build({ pauseAfterUserMessage: false });
    await preset(S, { continuations: 2 });
    personWrites(S, "msg_person");
    await settled();
    expect(rows.session(S)).toMatchObject({ continuations: 0, paused_at: null });
  });

  it("ends a countdown armed longer ago than the grace period, with reason user_message", async () => {
    build();
    await armed(S);
    await advance(GRACE_MS);
    personWrites(S, "msg_person");
    await settled();
    expect(ended(S)).toMatchObject([{ end_reason: "user_message" }]);
    expect(cancellations(S)).toMatchObject([{ reason: "user_message", detail: { messageId: "msg_person" } }]);
    expect(rows.session(S)).toMatchObject({ last_user_message_at: START.getTime() + GRACE_MS });
  });

  it("within the grace period after arming, is the echo of the turn that ended: the countdown goes on", async () => {
    const { countdowns } = build();
    await armed(S);
    await advance(GRACE_MS - 1);
    personWrites(S, "msg_echo");
    await settled();
    expect(countdowns.has(S)).toBe(true);
    expect(stillArmed(S)).toHaveLength(1);
    expect(rows.session(S)).toMatchObject({ last_user_message_at: START.getTime() + GRACE_MS - 1 });
  });

  it("with one of our own message ids is never a person's", async () => {
    const { ownMessages } = build();
    await preset(S, { continuations: 2, stagnantContinuations: 1 });
    ownMessages.choose("msg_ours", "inj_ours");
    await armed(S);
    await advance(GRACE_MS);
    personWrites(S, "msg_ours", "Continue with the open todos.");
    await settled();
    expect(stillArmed(S)).toHaveLength(1);
    expect(rows.session(S)).toMatchObject({ continuations: 2, stagnant_continuations: 1, paused_at: null });
  });

  it("stops a continuation's start watch: the person's message is the turn now", async () => {
    const { starts } = build();
    starts.watch(S, "inj_x", "msg_x", false);
    expect(starts.has(S)).toBe(true);
    personWrites(S, "msg_person");
    expect(starts.has(S)).toBe(false);
    await settled();
  });
});

describe("a deleted session", () => {
  it("lifts the stop: the session is gone", async () => {
    const { router, ctx } = build();
    await store.change(stop(ctx.scope(S), "command", Date.now()));
    expect(rows.session(S)).toMatchObject({ stopped_at: START.getTime(), stop_source: "command" });
    await advance(1000);
    router.handle(ev.deleted(S));
    await settled();
    expect(rows.session(S)).toMatchObject({
      deleted_at: START.getTime() + 1000,
      stopped_at: null,
      stop_source: null,
      recheck_at: null,
    });
  });

  it("ends its countdown (session_deleted) and forgets it, with the stop lifted in the same change", async () => {
    const { router, memories, ctx } = build();
    await store.change(stop(ctx.scope(S), "command", Date.now()));
    await armed(S);
    router.handle(ev.deleted(S));
    expect(memories.peek(S)).toBeUndefined();
    await settled();
    expect(ended(S)).toMatchObject([{ end_reason: "session_deleted" }]);
    expect(rows.session(S)).toMatchObject({ stopped_at: null, deleted_at: START.getTime() });
  });

  it("with no row yet, creates none", async () => {
    const { router } = build();
    router.handle(ev.deleted(S));
    await settled();
    expect(rows.session(S)).toBeUndefined();
  });
});

describe("requests", () => {
  it("a question asked is remembered until it is replied", () => {
    const { router, memories } = build();
    router.handle(ev.question(S, "que_1", true));
    router.handle(ev.question(S, "que_2", true));
    expect(memories.get(S).openRequestIds).toEqual(["que_1", "que_2"]);
    router.handle(ev.question(S, "que_1", false));
    expect(memories.get(S).openRequestIds).toEqual(["que_2"]);
  });

  it("a permission asked is remembered until it is replied", () => {
    const { router, memories } = build();
    router.handle({ type: "permission.asked", properties: { id: "per_1", sessionID: S, permission: "bash" } });
    expect(memories.get(S).openRequestIds.includes("per_1")).toBe(true);
    router.handle({ type: "permission.replied", properties: { sessionID: S, requestID: "per_1", reply: "once" } });
    expect(memories.get(S).openRequestIds.includes("per_1")).toBe(false);
  });
});

describe("other events", () => {
  it("a tool running ends the countdown with reason tool_activity", async () => {
    const { router, memories } = build();
    await armed(S);
    const before = memories.get(S).turnSignals;
    router.toolActivity(S, "before");
    expect(memories.get(S).turnSignals).toBe(before + 1);
    await settled();
    expect(cancellations(S)).toMatchObject([{ reason: "tool_activity", detail: { phase: "before" } }]);
  });

  it("a compaction is remembered and lifts the token limit", async () => {
    const { router, memories } = build();
    await preset(S, { tokenLimitAt: START.getTime() - 5000 });
    router.handle(ev.compacted(S));
    expect(memories.get(S).compactedRecently).toBe(true);
    await settled();
    expect(rows.session(S)).toMatchObject({ token_limit_at: null });
  });

  it("todos are remembered as they come", () => {
    const { router, memories } = build();
    router.handle(ev.todos(S, [["parse", "pending"]]));
    expect(memories.get(S).todos).toMatchObject([{ content: "parse", status: "pending" }]);
  });

  it("a sub-session's parent is written once it is known", async () => {
    const { router } = build();
    router.handle(ev.created("ses_child", "ses_parent"));
    await settled();
    expect(rows.session("ses_child")).toMatchObject({ parent_id: "ses_parent" });
  });

  it("a session's title is written when it is news, and each later event with the same title writes nothing", async () => {
    const { router } = build();
    router.handle(ev.titled("ses_titled", "Refactor the parser"));
    await settled();
    expect(rows.session("ses_titled")).toMatchObject({ title: "Refactor the parser" });
    const written = rows.session("ses_titled")!.updated_at;
    await advance(1000);
    for (let i = 0; i < 3; i++) router.handle(ev.titled("ses_titled", "Refactor the parser"));
    await settled();
    expect(rows.session("ses_titled")!.updated_at).toBe(written);
    router.handle(ev.titled("ses_titled", "Refactor the parser and its tests"));
    await settled();
    expect(rows.session("ses_titled")).toMatchObject({ title: "Refactor the parser and its tests" });
  });

  it("events it cannot read are counted as ignored, and change nothing", async () => {
    const { router } = build();
    for (const raw of [
      null,
      "session.idle",
      { type: "server.connected", properties: {} },
      { type: "session.idle" },
      { type: "session.idle", properties: { sessionID: 42 } },
      { type: "session.status", properties: { sessionID: S, status: { type: "sleeping" } } },
    ])
      router.handle(raw);
    expect(router.eventsIgnored).toBe(6);
    await settled();
    expect(rows.audit()).toEqual([]);
    expect(rig.memories.size).toBe(0);
  });
});

describe("observe(), while the store is paused", () => {
  it("keeps the live facts in memory and writes nothing", async () => {
    const { router, memories, ctx } = build();
    ctx.lifecycle.enter("paused_store");
    router.observe(ev.status(S, "busy"));
    router.observe(ev.todos(S, [["parse", "pending"]]));
    router.observe(ev.question(S, "que_1", true));
    router.observe(ev.compacted(S));
    router.observe(ev.userMessage(S, "msg_seen_while_paused"));
    router.observe(ev.textPart(S, "msg_seen_while_paused", "a person's words"));
    router.observe(ev.error(S, "APIError", "Overloaded"));
    router.observe(ev.deleted(OTHER));
    router.observe({ type: "server.connected", properties: {} });
    const memory = memories.get(S);
    expect(memory.status).toBe("busy");
    expect(memory.todos).toMatchObject([{ content: "parse" }]);
    expect(memory.openRequestIds).toEqual(["que_1"]);
    expect(memory.compactedRecently).toBe(true);
    // The message is known as a user's (its parts are not output), and no news when it comes again.
    expect(router.userMessages.isUserMessage("msg_seen_while_paused")).toBe(true);
    expect(router.userMessages.held).toBe(0);
    expect(router.eventsIgnored).toBe(0);
    await settled();
    expect(rows.session(S)).toBeUndefined();
    expect(rows.audit()).toEqual([]);
  });

  it("an idle is owed a look, taken once the store works again", async () => {
    const { router, host, ctx, looks } = build();
    host.addUserMessage(S, "build the parser");
    host.setTodos(S, [["parse", "pending"]]);
    ctx.lifecycle.enter("paused_store");
    router.observe(ev.idle(S));
    await settled();
    expect(rows.audit(S)).toEqual([]);
    ctx.lifecycle.enter("running");
    looks.lookAgainAtUnjudged();
    await settled();
    expect(rows.audit(S)).toMatchObject([{ event: "armed", detail: { trigger: "reevaluate" } }]);
  });
});

describe("forgetLiveState()", () => {
  it("after a gap in the events, forgets statuses, requests and held messages", () => {
    const { router, memories } = build();
    router.handle(ev.status(S, "busy"));
    router.handle(ev.question(S, "que_1", true));
    router.handle(ev.userMessage(S, "msg_held"));
    router.forgetLiveState();
    expect(memories.get(S).status).toBeUndefined();
    expect(memories.get(S).openRequests).toBe(0);
    expect(router.userMessages.held).toBe(0);
  });
});
