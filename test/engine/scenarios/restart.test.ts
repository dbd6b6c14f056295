// An engine closed mid-countdown and a new one opened on the same file: the misfire policy decides what happens.
import { describe, expect, it } from "vitest";
import { cancelByKey } from "../../../src/store/changes/cancel-by-key.js";
import { ev } from "../../support/events.js";
import { advance, useFakeTime } from "../../support/fake-time.js";
import { FakeHost, hostWithOpenTodos } from "../../support/fake-host.js";
import { DIRECTORY, startEngine, tempFolder, type EngineFixture } from "../../support/engine-fixture.js";
import { liveOwner } from "../../support/engine-context.js";
import { openTestDatabase } from "../../support/test-database.js";

const S = "ses_restart";
const fixtures: EngineFixture[] = [];

async function engine(folder: string, host: FakeHost) {
  const f = await startEngine({ folder, host, config: { countdownSeconds: 10, resumeWindowSeconds: 60 } });
  fixtures.push(f);
  return f;
}

async function armThenClose(folder: string, host: FakeHost, closeAfterMs: number) {
  const first = await engine(folder, host);
  first.enforcer.handleEvent(ev.idle(S));
  await advance(5);
  expect(first.rows.countdowns(S)).toMatchObject([{ state: "armed" }]);
  await advance(closeAfterMs - 5); // the countdown was armed 5 ms ago
  await first.close();
  return first;
}

useFakeTime(() => fixtures.splice(0));

const newHost = () => hostWithOpenTodos(S);

describe("restart", () => {
  it("a deadline still ahead is resumed for the time left", async () => {
    const folder = tempFolder();
    const host = newHost();
    await armThenClose(folder, host, 3000);
    await advance(2000); // down for 2 s: 5 s of the 10 s countdown remain
    const second = await engine(folder, host);
    expect(second.rows.audit(S).at(-1)).toMatchObject({
      event: "resumed",
      reason: "restart",
      detail: { remainingMs: 5000 },
    });
    await advance(4900);
    await second.enforcer.settled();
    expect(host.prompts).toHaveLength(0);
    await advance(200);
    await second.enforcer.settled();
    expect(host.prompts).toHaveLength(1);
    expect(second.rows.countdowns(S)).toMatchObject([{ state: "fired", owner: second.enforcer.owner }]);
    expect(second.rows.trail(S)).toEqual(["armed", "resumed:restart", "fired", "injected"]);
  });

  it("a countdown overdue by less than the resume window fires once, at once", async () => {
    const folder = tempFolder();
    const host = newHost();
    await armThenClose(folder, host, 1000);
    await advance(30_000); // the deadline passed 21 s ago
    const second = await engine(folder, host);
    await advance(0);
    await second.enforcer.settled();
    expect(host.prompts).toHaveLength(1);
    const resumed = second.rows.audit(S).find((r) => r.event === "resumed");
    expect(resumed?.detail.lateMs).toBe(21_000);
    expect(second.rows.audit(S).find((r) => r.event === "fired")).toMatchObject({
      detail: { lateMs: 21_000, resumed: "restart" },
    });
    await advance(60_000);
    await second.enforcer.settled();
    expect(host.prompts).toHaveLength(1);
  });

  it("a stale countdown expires with its lateness and sends nothing", async () => {
    const folder = tempFolder();
    const host = newHost();
    await armThenClose(folder, host, 1000);
    await advance(120_000);
    const second = await engine(folder, host);
    await advance(30_000);
    await second.enforcer.settled();
    expect(host.prompts).toHaveLength(0);
    expect(second.rows.countdowns(S)).toMatchObject([{ state: "expired", end_reason: "stale_after_restart" }]);
    expect(second.rows.audit(S).at(-1)).toMatchObject({
      event: "expired",
      reason: "stale_after_restart",
      detail: { lateMs: 111_000, resumeWindowMs: 60_000 },
    });
  });

  it("a countdown held by a live engine is left to it", async () => {
    const folder = tempFolder();
    const hostA = newHost();
    const hostB = new FakeHost();
    const a = await engine(folder, hostA);
    a.enforcer.handleEvent(ev.idle(S));
    await advance(5);
    const b = await engine(folder, hostB);
    await advance(11_000);
    await a.enforcer.settled();
    await b.enforcer.settled();
    expect(hostA.prompts).toHaveLength(1);
    expect(hostB.prompts).toHaveLength(0);
    expect(b.rows.trail(S)).toEqual(["armed", "fired", "injected"]);
  });

  it("countdowns of another directory are not this process's business", async () => {
    const folder = tempFolder();
    const host = newHost();
    await armThenClose(folder, host, 1000);
    const other = await startEngine({ folder, host, directory: "/somewhere/else", config: { countdownSeconds: 10 } });
    fixtures.push(other);
    await advance(20_000);
    await other.enforcer.settled();
    expect(host.prompts).toHaveLength(0);
    expect(other.rows.countdowns(S)).toMatchObject([{ state: "armed", owner: null }]);
  });

  it("a pending injection left by a crash is reconciled: found → sent, not found → unknown and re-evaluated", async () => {
    const folder = tempFolder();
    const host = newHost();
    const first = await engine(folder, host);
    const raw = first.db;
    const now = Date.now();
    const insert = (id: string, session: string, countdown: string) =>
      raw.run(
        `INSERT INTO injections (id, session_id, countdown_id, message_id, directory, created_at, status, todos_total, todos_open, owner, lease_until, updated_at)
         VALUES (?, ?, ?, ?, '/work/project', ?, 'pending', 2, 2, 'otherhost/1/dead', ?, ?)`,
        id,
        session,
        countdown,
        `msg_${id}`,
        now - 5000,
        now - 1000,
        now - 5000,
      );
    insert("inj_delivered01", S, "cd_a");
    insert("inj_lostinflight", "ses_lost", "cd_b");
    host.addUserMessage(S, "[SYSTEM REMINDER - TODO CONTINUATION]\n…\n[todo-continuation id=inj_delivered01]", {
      id: "msg_inj_delivered01",
    });
    host.setTodos("ses_lost", [["x", "pending"]]);
    host.addUserMessage("ses_lost", "go");
    await first.close();
    const second = await engine(folder, host);
    await second.enforcer.settled();
    expect(second.rows.injections(S)).toMatchObject([{ id: "inj_delivered01", status: "sent" }]);
    expect(second.rows.audit(S).at(-1)).toMatchObject({ event: "reconciled", reason: "found" });
    expect(second.rows.injections("ses_lost")).toMatchObject([{ status: "unknown" }]);
    expect(second.rows.trail("ses_lost")).toEqual(["reconciled:not_found", "armed"]);
    expect(host.prompts).toHaveLength(0);
  });

  // A fleet replica frozen mid-call and woken: alive again, but its server followed by another, which must settle the
  // row (its outcome was lost: the call is over once its lease is), or the session waits on it forever.
  it("a pending injection of a live process, silent past the lease it took for the call, is reconciled", async () => {
    const folder = tempFolder();
    const host = newHost();
    const first = await engine(folder, host);
    const owner = liveOwner();
    await first.port.heartbeat(owner, 3_600_000);
    const now = Date.now();
    first.db.run(
      `INSERT INTO injections (id, session_id, countdown_id, message_id, directory, created_at, status, todos_total, todos_open, owner, lease_until, updated_at)
       VALUES ('inj_silent', 'ses_silent', 'cd_s', 'msg_inj_silent', '/work/project', ?, 'pending', 2, 2, ?, ?, ?)`,
      now - 90_000,
      owner,
      now - 1000,
      now - 90_000,
    );
    host.setTodos("ses_silent", [["x", "pending"]]);
    host.addUserMessage("ses_silent", "go");
    await first.close();
    const second = await engine(folder, host);
    await second.port.heartbeat(owner, 3_600_000);
    await second.enforcer.settled();
    expect(second.rows.injections("ses_silent")).toMatchObject([{ status: "unknown" }]);
    expect(second.rows.trail("ses_silent")).toEqual(["reconciled:not_found", "armed"]);
  });

  it("a continuation found after a crash updates the loop counts and the progress baseline it was sent with", async () => {
    const folder = tempFolder();
    const host = newHost();
    const first = await engine(folder, host);
    const onSent = JSON.stringify({
      stagnantContinuations: 2,
      unproductiveReplies: 0,
      todoSnapshot: JSON.stringify({ closedHigh: 0, ranks: { a: 0, b: 0 } }),
      backoffUntil: null,
    });
    first.db.run(
      `INSERT INTO injections (id, session_id, countdown_id, directory, created_at, status, todos_total, todos_open, on_sent, owner, lease_until, updated_at)
       VALUES ('inj_foundafter1', ?, 'cd_x', '/work/project', ?, 'pending', 2, 2, ?, 'otherhost/1/dead', ?, ?)`,
      S,
      Date.now() - 5000,
      onSent,
      Date.now() - 1000,
      Date.now() - 5000,
    );
    host.addUserMessage(S, "[SYSTEM REMINDER - TODO CONTINUATION]\n…\n[todo-continuation id=inj_foundafter1]");
    await first.close();
    const second = await engine(folder, host);
    await second.enforcer.settled();
    expect(second.rows.session(S)).toMatchObject({
      continuations: 1,
      stagnant_continuations: 2,
      todo_snapshot: JSON.stringify({ closedHigh: 0, ranks: { a: 0, b: 0 } }),
    });
    // The next idle judges progress against it: nothing moved, so this is the third continuation without progress.
    second.enforcer.handleEvent(ev.idle(S));
    await advance(5);
    await second.enforcer.settled();
    expect(second.rows.audit(S).at(-1)).toMatchObject({
      event: "skipped",
      reason: "stagnation",
      detail: { unproductiveContinuations: 3 },
    });
  });
});

describe("automatic retention", () => {
  it("deletes settled history older than retentionDays a minute after start, and keeps what is armed", async () => {
    const host = newHost();
    const f = await startEngine({ host, config: { retentionDays: 30, countdownSeconds: 10 } });
    fixtures.push(f);
    const old = Date.now() - 31 * 86_400_000;
    f.db.run(
      "INSERT INTO audit_events (at, session_id, event, reason, detail) VALUES (?, 'ses_old', 'skipped', 'no_todos', '{}')",
      old,
    );
    f.db.run(
      "INSERT INTO audit_events (at, session_id, event, reason, detail) VALUES (?, 'ses_new', 'skipped', 'no_todos', '{}')",
      Date.now() - 86_400_000,
    );
    f.enforcer.handleEvent(ev.idle(S));
    await advance(5);
    await f.close();
    const g = await startEngine({ folder: f.folder, host, config: { retentionDays: 30, countdownSeconds: 3600 } });
    fixtures.push(g);
    await advance(59_000);
    expect(g.rows.audit("ses_old")).toHaveLength(1);
    await advance(1_100);
    await g.enforcer.settled();
    expect(g.rows.audit("ses_old")).toHaveLength(0);
    expect(g.rows.audit("ses_new")).toHaveLength(1);
    expect(host.logs.some((l) => l.message.startsWith("retention: deleted history older than 30 days"))).toBe(true);
  });
});

describe("two engines watching one session", () => {
  it("the second to see an idle defers to the first one's countdown (in_flight): one continuation", async () => {
    const folder = tempFolder();
    const host = newHost();
    const a = await engine(folder, host);
    const b = await engine(folder, host);
    a.enforcer.handleEvent(ev.idle(S));
    await advance(5);
    b.enforcer.handleEvent(ev.idle(S));
    await advance(5);
    await advance(11_000);
    await a.enforcer.settled();
    await b.enforcer.settled();
    expect(host.prompts).toHaveLength(1);
    expect(a.rows.trail(S)).toEqual(["armed", "skipped:in_flight", "fired", "injected"]);
  });

  // OpenCode loads the server plugin twice in TUI mode: the second one may still be reading a loaded OpenCode when
  // the person cancels the first one's countdown. Arming after the key would send what they just cancelled.
  it("a look still reading OpenCode when the person pressed the key yields to it (skipped: user_key)", async () => {
    const folder = tempFolder();
    const hostA = newHost();
    const hostB = newHost();
    hostB.todoDelayMs = 3000;
    const a = await engine(folder, hostA);
    const b = await engine(folder, hostB);
    a.enforcer.handleEvent(ev.idle(S));
    b.enforcer.handleEvent(ev.idle(S));
    await advance(1000);
    expect(a.rows.countdowns(S)).toMatchObject([{ state: "armed" }]);
    await pressKey(folder);
    await advance(3000); // B's read answers now
    await advance(20_000);
    await a.enforcer.settled();
    await b.enforcer.settled();
    expect(hostA.prompts.length + hostB.prompts.length).toBe(0);
    expect(a.rows.trail(S)).toEqual(["armed", "cancelled:user_key", "skipped:user_key"]);
    expect(a.rows.audit(S).at(-1)).toMatchObject({ detail: { stage: "idle", trigger: "idle" } });
    expect(a.rows.countdowns(S).map((c) => c.state)).toEqual(["cancelled"]);
  });

  // The same, when the second one's read failed before the key and it owes the session another look (which either
  // engine may take: `recheck_at` is shared).
  it("a retry owed by a todo read that failed before the key is dropped with the countdown it cancels", async () => {
    const folder = tempFolder();
    const hostA = newHost();
    const hostB = newHost();
    hostB.todoBehaviour = "fail";
    const a = await engine(folder, hostA);
    const b = await engine(folder, hostB);
    a.enforcer.handleEvent(ev.idle(S));
    await advance(1000);
    b.enforcer.handleEvent(ev.idle(S)); // after A armed, so that the trail's order is known
    await advance(1000);
    expect(a.rows.trail(S)).toEqual(["armed", "skipped:todo_fetch_failed"]);
    expect(a.rows.audit(S).at(-1)).toMatchObject({ detail: { attempt: 1, retryInMs: 5000 } });
    await pressKey(folder);
    hostB.todoBehaviour = "ok"; // OpenCode answers again by the time the retry looks
    await advance(30_000);
    await a.enforcer.settled();
    await b.enforcer.settled();
    expect(hostA.prompts.length + hostB.prompts.length).toBe(0);
    // The key dropped the look B owed the session; neither engine looked again.
    expect(a.rows.trail(S)).toEqual(["armed", "skipped:todo_fetch_failed", "cancelled:user_key"]);
    expect(a.rows.session(S)).toMatchObject({ recheck_at: null });
  });

  it("a todo read that fails right before the prompt while the key cancels the countdown owes no retry", async () => {
    const folder = tempFolder();
    const host = newHost();
    const a = await engine(folder, host);
    a.enforcer.handleEvent(ev.idle(S));
    await advance(1000);
    host.todoBehaviour = "hang";
    await advance(9500); // the deadline: the read right before the prompt hangs
    await pressKey(folder);
    host.todoBehaviour = "ok";
    await advance(11_000); // the read's timeout (hostTimeoutMs)
    await advance(30_000);
    await a.enforcer.settled();
    expect(host.prompts).toHaveLength(0);
    expect(a.rows.trail(S)).toEqual(["armed", "cancelled:user_key"]);
    expect(a.rows.session(S)).toMatchObject({ recheck_at: null });
  });

  // Another engine's continuation answered the idle a slow look judges; the session is busy again, but the slow
  // engine cannot tell (its status read fails too) and memory still says idle. Seen on CI: 1,000 sessions on two
  // processes, one continued twice.
  describe("a look at an idle that another engine's continuation answered meanwhile", () => {
    async function twoEngines(readMs: number) {
      const folder = tempFolder();
      const hostA = newHost();
      const hostB = newHost();
      hostA.autoReply = false;
      hostA.onAccepted = () => void (hostA.statuses[S] = "busy");
      hostB.todoDelayMs = readMs;
      hostB.statusBehaviour = "fail";
      const a = await engine(folder, hostA);
      const b = await engine(folder, hostB);
      a.enforcer.handleEvent(ev.idle(S)); // A arms; its countdown ends at 10 s
      await advance(1000);
      b.enforcer.handleEvent(ev.idle(S)); // B's look at the same idle is still reading at 10 s
      return { a, b, hostA, hostB };
    }

    it("yields to it (skipped: in_flight, naming the continuation) instead of arming", async () => {
      const { a, b, hostA, hostB } = await twoEngines(9500); // answers at 10.5 s
      await advance(40_000);
      await a.enforcer.settled();
      await b.enforcer.settled();
      expect(hostA.prompts.length + hostB.prompts.length).toBe(1);
      expect(a.rows.trail(S)).toEqual(["armed", "fired", "injected", "skipped:in_flight"]);
      const injectionId = a.rows.audit(S).find((r) => r.event === "fired")?.detail.injectionId;
      expect(a.rows.audit(S).at(-1)).toMatchObject({ detail: { answeredBy: injectionId, trigger: "idle" } });
    });

    it("owes no retry when its todo read failed after it", async () => {
      const { a, b, hostA, hostB } = await twoEngines(12_000); // times out at 11 s
      await advance(10_500);
      hostB.todoDelayMs = 0; // a retry would read the todos now
      await advance(40_000);
      await a.enforcer.settled();
      await b.enforcer.settled();
      expect(hostA.prompts.length + hostB.prompts.length).toBe(1);
      expect(a.rows.trail(S)).toEqual(["armed", "fired", "injected", "skipped:in_flight"]);
      expect(a.rows.session(S)).toMatchObject({ recheck_at: null });
    });
  });

  // The same idle reaching a slow engine only after the other's continuation went out: no continuation fired since its
  // look began, so nothing says it was answered but the messages (ours, last, no reply yet) and a status the slow engine
  // cannot read. Seen in the multi-process crash test under load: eight sessions continued twice.
  it("a look at an idle seen after another engine's continuation, unable to read the status, sends nothing on top", async () => {
    const folder = tempFolder();
    const hostA = newHost();
    hostA.autoReply = false;
    hostA.onAccepted = () => void (hostA.statuses[S] = "busy");
    // One OpenCode seen through two connections: B's status read fails, the rest is the same server.
    const hostB = new FakeHost();
    hostB.todos = hostA.todos;
    hostB.messages = hostA.messages;
    hostB.statusBehaviour = "fail";
    const a = await engine(folder, hostA);
    const b = await engine(folder, hostB);
    a.enforcer.handleEvent(ev.idle(S));
    await advance(11_000);
    await a.enforcer.settled();
    expect(hostA.prompts).toHaveLength(1);
    b.enforcer.handleEvent(ev.idle(S));
    await advance(40_000);
    await a.enforcer.settled();
    await b.enforcer.settled();
    expect(hostB.prompts).toHaveLength(0);
    const injectionId = a.rows.audit(S).find((r) => r.event === "fired")?.detail.injectionId;
    expect(b.rows.trail(S)).toEqual(["armed", "fired", "injected", "skipped:in_flight"]);
    expect(b.rows.audit(S).at(-1)).toMatchObject({
      detail: { stage: "idle", trigger: "idle", unanswered: injectionId, status: "unread" },
    });
  });

  it("a look that began after the key is a new idle, and arms", async () => {
    const folder = tempFolder();
    const host = newHost();
    const a = await engine(folder, host);
    a.enforcer.handleEvent(ev.idle(S));
    await advance(1000);
    await pressKey(folder);
    await advance(1000);
    a.enforcer.handleEvent(ev.idle(S));
    await advance(11_000);
    await a.enforcer.settled();
    expect(a.rows.trail(S)).toEqual(["armed", "cancelled:user_key", "armed", "fired", "injected"]);
  });
});

/** The TUI's key, from its own process: the session's armed countdown ends `cancelled` with reason `user_key`. */
async function pressKey(folder: string) {
  const tui = await openTestDatabase(folder);
  try {
    expect(
      await tui.store.change(cancelByKey({ sessionId: S, directory: DIRECTORY }, Date.now(), { source: "tui" })),
    ).toBeTruthy();
  } finally {
    await tui.store.close();
  }
}
