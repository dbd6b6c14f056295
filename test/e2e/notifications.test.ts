// Notices from a real OpenCode 1.18.33 with the scripted model, to a loopback webhook receiver and a command channel
// (docs/notifications.md): each stop a person must hear of is told once — a question asked in plain text, a budget
// spent, all done after continuations — and a cancel by the person's own key is told nowhere. A receiver that refuses
// for 30 s hears the notice once when it accepts, and so does one that refused until OpenCode was SIGKILLed and
// started again on the same database. Each case waits for the row that closes it (the `notified` audit row, then the
// session at rest) and then counts what the receiver accepted and what the outbox holds.
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cancelByKey } from "../../src/store/changes/cancel-by-key.js";
import { openStore } from "../../src/store/open/open.js";
import { session } from "../../src/store/reads.js";
import { verifySignature } from "../../src/notices/webhook.js";
import { startReceiver, type Answer, type Received, type Receiver } from "../support/http-receiver.js";
import { E2E } from "./support/harness.js";
import type { AuditRow, NoticeRow } from "./support/world.js";
import { script } from "./scenarios.js";

const SECRET = "e2e-notice-secret";
/** The sender's backoff after the 1st, 2nd and 3rd failed attempt (core/notice-delivery.ts). */
const BACKOFF_MS = [5_000, 10_000, 20_000];

interface Hook {
  request: Received;
  status: number;
  at: number;
}

const sessionOf = (request: Received) => (JSON.parse(request.body) as { session: { id: string } }).session.id;

describe("notices from a real OpenCode server", () => {
  let receiver: Receiver;
  let world: E2E;
  let commandOutput = "";
  /** Every request the receiver got, with its answer. */
  const hooks: Hook[] = [];
  /** How the receiver answers a session's notices, where a test says so; 200 otherwise. */
  const answers = new Map<string, () => Answer>();

  beforeAll(async () => {
    receiver = await startReceiver((request) => {
      const answer = answers.get(sessionOf(request))?.() ?? { status: 200 };
      hooks.push({ request, status: answer.status, at: Date.now() });
      return answer;
    });
    const webhook = { type: "webhook", url: receiver.url("/hook"), secret: SECRET };
    // Each delivery in a file of its own: the shell's pid names it.
    const command = {
      type: "command",
      command: "/bin/sh",
      args: ["-c", 'cat > "$0/notice-$$.json"'],
      kinds: ["budget"],
    };
    world = new E2E(script, { countdownSeconds: 2, maxContinuations: 2, notify: [webhook, command] });
    commandOutput = join(world.root, "command-notices");
    mkdirSync(commandOutput);
    command.args.push(commandOutput);
    await world.start();
  }, 60_000);
  afterAll(async () => {
    await world?.stop();
    await receiver?.close();
  });

  const hooksOf = (id: string) => hooks.filter((h) => sessionOf(h.request) === id);
  const acceptedOf = (id: string) => hooksOf(id).filter((h) => h.status === 200);
  const noticeRows = (id: string) =>
    world.rows<NoticeRow>("SELECT * FROM notices WHERE session_id = ? ORDER BY channel", id);
  const auditOf = (id: string, event: string) => world.audit(id).filter((r) => r.event === event);

  /** Resolves once the session has `count` `notified` rows (one per channel that took its notice) and is at rest. */
  async function notifiedAtRest(id: string, count = 1, timeoutMs = 20_000): Promise<AuditRow[]> {
    await world.waitFor(
      () => `${count} notified row(s) for ${id} (trail so far: ${world.trail(id).join(", ")})`,
      () => auditOf(id, "notified").length >= count,
      timeoutMs,
    );
    const kind = auditOf(id, "notified")[0]!.reason!;
    await world.trailAtRest(id, `notified:${kind}`);
    return auditOf(id, "notified");
  }

  /** The one request the receiver accepted for the session: its body checked against its signature and headers. */
  function acceptedNotice(id: string): Record<string, unknown> {
    const accepted = acceptedOf(id);
    expect(accepted).toHaveLength(1);
    const { headers, body } = accepted[0]!.request;
    expect(verifySignature(SECRET, headers, body)).toBe(true);
    expect(verifySignature("another secret", headers, body)).toBe(false);
    const notice = JSON.parse(body) as Record<string, unknown>;
    expect(headers).toMatchObject({
      "content-type": "application/json",
      "x-todo-continuation-event": notice.kind,
      "x-todo-continuation-id": notice.id,
    });
    expect(accepted[0]!.request).toMatchObject({ method: "POST", path: "/hook" });
    return notice;
  }

  /** The notice a skip made: its outbox rows were written with the skip (same instant), one per channel taking it. */
  function expectWrittenByTheStop(id: string, skipped: AuditRow, channels: string[]): NoticeRow[] {
    const rows = noticeRows(id);
    expect(rows.map((r) => r.channel)).toEqual(channels);
    for (const row of rows) {
      expect(row).toMatchObject({ state: "sent", reason: skipped.reason, created_at: skipped.at });
      expect(row.id).toBe(`${row.notice_id}:${row.channel}`);
    }
    expect(new Set(rows.map((r) => r.notice_id)).size).toBe(1);
    return rows;
  }

  it("a question asked in plain text sends one `question` notice, signed, saying the session and the way on", async () => {
    const id = await world.session("text-question");
    await world.prompt(id, "scenario: text-question");
    const skipped = await world.waitForAudit(id, "skipped:waiting_for_user");
    const notified = await notifiedAtRest(id);
    expect(world.trail(id)).toEqual(["skipped:waiting_for_user", "notified:question"]);
    const [row] = expectWrittenByTheStop(id, skipped, ["webhook"]);
    expect(notified[0]!.detail).toMatchObject({ noticeId: row!.notice_id, channel: "webhook", attempt: 1 });
    expect(acceptedNotice(id)).toEqual({
      format: 1,
      id: row!.notice_id,
      kind: "question",
      at: new Date(skipped.at).toISOString(),
      directory: world.server.project,
      session: { id, title: "text-question" },
      reason: "waiting_for_user",
      text: "Waiting: the assistant asked you.",
      todos: { done: 1, open: 2, total: 3 },
      continuations: { count: 0, cost: 0, tokens: 0 },
      goOn: { palette: "(answer in the session)", command: `opencode --session ${id}` },
    });
    expect(hooksOf(id)).toHaveLength(1);
  });

  it("a budget spent (maxContinuations) sends one `budget` notice", async () => {
    const id = await world.session("budget");
    await world.prompt(id, "scenario: stagnation");
    const skipped = await world.waitForAudit(id, "skipped:budget_exhausted", 30_000);
    await notifiedAtRest(id, 2);
    expect(world.trail(id)).toEqual([
      ...Array.from({ length: 2 }, () => ["armed", "fired", "injected"]).flat(),
      "skipped:budget_exhausted",
      "notified:budget",
      "notified:budget",
    ]);
    const rows = expectWrittenByTheStop(id, skipped, ["command", "webhook"]);
    expect(acceptedNotice(id)).toMatchObject({
      id: rows[0]!.notice_id,
      kind: "budget",
      reason: "budget_exhausted",
      text: "Stopped: the budget of 2 is spent.",
      hint: "Palette: Allow more to go on.",
      todos: { done: 1, open: 2, total: 3 },
      continuations: { count: 2 },
      goOn: { palette: "Allow more todo continuations", command: `todo-continuation allow ${id}` },
    });
    // What the continuations cost, as `todo-continuation cost` sums their bills: the last one's too, whose turn ended
    // at the idle that told the stop. The scripted model has no price here (a price changes the hint): tokens tell.
    const [billed] = world.rows<{ cost: number; tokens: number }>(
      "SELECT sum(cost) AS cost, sum(tokens) AS tokens FROM continuation_costs WHERE session_id = ?",
      id,
    );
    const told = acceptedNotice(id).continuations as { cost: number; tokens: number };
    expect(billed!.tokens).toBeGreaterThan(0);
    expect(told.tokens).toBe(billed!.tokens);
    expect(told.cost).toBeCloseTo(billed!.cost, 10);
    expect(hooksOf(id)).toHaveLength(1);
  });

  it("all todos done after continuations sends one `done` notice", async () => {
    const id = await world.session("basic");
    await world.prompt(id, "scenario: basic");
    const skipped = await world.waitForAudit(id, "skipped:todos_complete", 20_000);
    await notifiedAtRest(id);
    expect(world.trail(id)).toEqual(["armed", "fired", "injected", "skipped:todos_complete", "notified:done"]);
    const [row] = expectWrittenByTheStop(id, skipped, ["webhook"]);
    expect(acceptedNotice(id)).toMatchObject({
      id: row!.notice_id,
      kind: "done",
      reason: "todos_complete",
      text: "Done: every todo is closed.",
      todos: { done: 3, open: 0, total: 3 },
      continuations: { count: 1 },
    });
    expect(hooksOf(id)).toHaveLength(1);
  });

  it("a countdown cancelled by the person's key (the TUI's Esc) is told nowhere", async () => {
    const id = await world.session("cancelled");
    await world.prompt(id, "scenario: stop");
    await world.waitForAudit(id, "armed");
    // What the TUI's Esc writes (tui/controls.ts `cancel`): the cancel-by-key change, on the same database.
    const store = await openStore(world.dbPath, { kind: "tui" });
    try {
      const known = await store.read(session(id));
      const scope = { sessionId: id, directory: known!.directory, server: known!.server ?? null };
      const ended = await store.change(cancelByKey(scope, Date.now(), { source: "tui", via: "escape" }));
      expect(ended).toBeDefined();
    } finally {
      await store.close();
    }
    // At rest after the cancel (or a look that was reading OpenCode yielding to it): no stop can follow without a new
    // event, and a notice is only ever written with its stop.
    await world.waitFor(
      () => `the enforcer at rest after the cancel (trail so far: ${world.trail(id).join(", ")})`,
      async () => {
        const owed = world.owed(id);
        const closed = owed.last === "cancelled:user_key" || owed.last === "skipped:user_key";
        return closed && owed.armed === 0 && owed.pending === 0 && owed.recheckAt === null && world.sessionIdle(id);
      },
    );
    expect(world.trail(id)).toContain("cancelled:user_key");
    expect(world.trail(id).filter((t) => t.startsWith("notified") || t.startsWith("notice_failed"))).toEqual([]);
    expect(noticeRows(id)).toEqual([]);
    expect(hooksOf(id)).toEqual([]);
    expect(world.injections(id)).toEqual([]);
  });

  it("a command channel gets the notice's JSON on its stdin: the file it wrote holds the notice", async () => {
    const id = await world.session("budget for the command");
    await world.prompt(id, "scenario: stagnation");
    const skipped = await world.waitForAudit(id, "skipped:budget_exhausted", 30_000);
    await notifiedAtRest(id, 2);
    const [commandRow, webhookRow] = expectWrittenByTheStop(id, skipped, ["command", "webhook"]);
    const written = readdirSync(commandOutput)
      .map((name) => JSON.parse(readFileSync(join(commandOutput, name), "utf8")) as { session: { id: string } })
      .filter((notice) => notice.session.id === id);
    expect(written).toHaveLength(1);
    // The same notice as the webhook's body, and as the outbox row recorded it.
    expect(written[0]).toEqual(acceptedNotice(id));
    expect(written[0]).toMatchObject({ id: commandRow!.notice_id, kind: "budget", session: { id } });
    expect(JSON.parse(commandRow!.body)).toEqual(written[0]);
    expect(JSON.parse(webhookRow!.body)).toEqual(written[0]);
  });

  it("a receiver that refuses (503) for 30 s, then accepts: the notice arrives once, after retries 5, 10 and 20 s apart", async () => {
    const id = await world.session("refused");
    let refusingUntil: number | undefined;
    answers.set(id, () => {
      refusingUntil ??= Date.now() + 30_000;
      return Date.now() < refusingUntil ? { status: 503, body: "down for maintenance" } : { status: 200 };
    });
    await world.prompt(id, "scenario: text-question");
    const skipped = await world.waitForAudit(id, "skipped:waiting_for_user");
    const [notified] = await notifiedAtRest(id, 1, 90_000);
    const failed = auditOf(id, "notice_failed");
    const refused = hooksOf(id).filter((h) => h.status === 503);
    console.log(
      `e2e notices, refused for 30 s: attempts at ${hooksOf(id)
        .map((h) => `+${((h.at - hooksOf(id)[0]!.at) / 1000).toFixed(1)} s (${h.status})`)
        .join(", ")}`,
    );
    // Attempts at 0, +5 and +15 s fall in the 30 s; the next, 20 s later, is after them.
    expect(refused).toHaveLength(3);
    expect(acceptedOf(id)).toHaveLength(1);
    expect(hooksOf(id)).toHaveLength(4);
    expect(failed.map((r) => r.detail)).toEqual(
      BACKOFF_MS.map((_, i) =>
        expect.objectContaining({ attempt: i + 1, channel: "webhook", error: expect.stringContaining("503") }),
      ),
    );
    for (const [i, backoff] of BACKOFF_MS.entries()) {
      const retryIn = failed[i]!.detail.retryInMs as number;
      expect(retryIn).toBeGreaterThan(backoff - 1000);
      expect(retryIn).toBeLessThanOrEqual(backoff);
      expect(hooksOf(id)[i + 1]!.at - hooksOf(id)[i]!.at).toBeGreaterThanOrEqual(backoff - 50);
    }
    expect(notified!.detail).toMatchObject({ attempt: 4 });
    expect(world.trail(id)).toEqual([
      "skipped:waiting_for_user",
      "notice_failed:question",
      "notice_failed:question",
      "notice_failed:question",
      "notified:question",
    ]);
    const [row] = expectWrittenByTheStop(id, skipped, ["webhook"]);
    expect(row).toMatchObject({ attempts: 4 });
    // Every retry is the same notice, signed afresh.
    const bodies = hooksOf(id).map((h) => JSON.parse(h.request.body) as { id: string });
    expect(new Set(bodies.map((b) => b.id))).toEqual(new Set([row!.notice_id]));
    expect(acceptedNotice(id)).toMatchObject({ id: row!.notice_id, kind: "question" });
  }, 120_000);

  it("OpenCode SIGKILLed while the notice waits for a retry: after the restart it arrives once", async () => {
    const id = await world.session("killed");
    let killed = false;
    answers.set(id, () => (killed ? { status: 200 } : { status: 503 }));
    await world.prompt(id, "scenario: text-question");
    const skipped = await world.waitForAudit(id, "skipped:waiting_for_user");
    await world.waitForAudit(id, "notice_failed:question");
    // Killed at once: the retry is 5 s away, so the notice is pending, held by no one.
    await world.crashServer();
    killed = true;
    expect(noticeRows(id)).toMatchObject([{ state: "pending", attempts: 1 }]);
    const refusedBeforeKill = hooksOf(id).length;
    await world.startServer();
    await notifiedAtRest(id, 1, 60_000);
    const [row] = expectWrittenByTheStop(id, skipped, ["webhook"]);
    expect(row!.attempts).toBe(refusedBeforeKill + 1);
    expect(acceptedNotice(id)).toMatchObject({ id: row!.notice_id, kind: "question", session: { id } });
    expect(hooksOf(id)).toHaveLength(refusedBeforeKill + 1);
    // The restart judged the session's idle again, if at all, without telling its stop twice.
    expect(world.trail(id).filter((t) => t.startsWith("notified"))).toEqual(["notified:question"]);
    expect(auditOf(id, "notice_failed")).toHaveLength(refusedBeforeKill);
  }, 120_000);
});
