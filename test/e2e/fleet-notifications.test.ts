// Notices from a fleet: three replicas of `todo-continuation serve --db postgres://…` (the built CLI), each following
// one of three OpenCode servers on one PostgreSQL database (support/fleet.ts), every replica with the same webhook
// channel. Each session is continued twice and then all done: its stop makes one `done` notice, which exactly one
// replica delivers, once — also when the replica that holds it is SIGKILLed before the receiver took it, and another
// replica takes its server over. The servers are simulated (held to the real one by sim-opencode.test.ts): what is
// tested is how the fleet shares its notices; notices from a real OpenCode are notifications.test.ts's.
import { afterEach, describe, expect, it } from "vitest";
import { verifySignature } from "../../src/notices/webhook.js";
import { startReceiver, type Answer, type Received, type Receiver } from "../support/http-receiver.js";
import { waitFor } from "../support/wait-for.js";
import { Fleet } from "./support/fleet.js";
import { SimulatedOpenCode } from "./support/fleet-hosts.js";
import type { NoticeRow } from "./support/world.js";

const SECRET = "fleet-notice-secret";

const sessionOf = (request: Received) => (JSON.parse(request.body) as { session: { id: string } }).session.id;

describe("notices from a fleet of service replicas", () => {
  let fleet: Fleet | undefined;
  let receiver: Receiver | undefined;
  /** What the receiver answered to each request. */
  let answered: Array<{ request: Received; status: number }> = [];
  afterEach(async (context) => {
    if (context.task.result?.state === "fail" && fleet?.url)
      console.error(`fleet notices test failed: replica logs and rows kept in ${await fleet.keep()}`);
    await fleet?.stop();
    await receiver?.close();
    fleet = receiver = undefined;
    answered = [];
  });

  /** A fleet of three replicas on three servers whose replicas send to a webhook answering with `answer`. */
  async function startFleet(sessionsPerServer: number, answer: (request: Received) => Answer): Promise<Fleet> {
    receiver = await startReceiver((request) => {
      const given = answer(request);
      answered.push({ request, status: given.status });
      return given;
    });
    fleet = new Fleet(
      { notify: [{ type: "webhook", url: receiver.url("/hook"), secret: SECRET }] },
      new SimulatedOpenCode(),
    );
    await fleet.start(3, 3);
    await fleet.createSessions(sessionsPerServer);
    return fleet;
  }

  /**
   * Once every session's stop is notified (its `notified` row, which closes the notice): one `done` row per session,
   * sent, under its own server; and the receiver accepted each notice exactly once. The notices' rows, for more checks.
   */
  async function expectEachNotifiedOnce(fleet: Fleet): Promise<NoticeRow[]> {
    const total = fleet.sessions.length;
    const notified = await waitFor(
      "a notified row per session",
      async () => {
        const rows = await fleet.all<{ session_id: string }>(
          "SELECT session_id FROM audit_events WHERE event = 'notified'",
        );
        return rows.length >= total && rows;
      },
      { timeoutMs: 90_000, interval: 100 },
    );
    const notices = await fleet.all<NoticeRow>("SELECT * FROM notices ORDER BY session_id");
    const serverOf = new Map(fleet.sessions.map((s) => [s.id, `pod-${s.server}`]));
    expect(notices.map((r) => r.session_id)).toEqual(fleet.sessions.map((s) => s.id).sort());
    for (const row of notices) {
      expect(row).toMatchObject({ channel: "webhook", kind: "done", state: "sent" });
      expect(row.server).toBe(serverOf.get(row.session_id));
    }
    expect(notified.map((r) => r.session_id).sort()).toEqual(notices.map((r) => r.session_id));

    const accepted = answered
      .filter((a) => a.status === 200)
      .map(({ request }) => ({
        id: request.headers["x-todo-continuation-id"],
        notice: JSON.parse(request.body) as { id: string; session: { id: string } },
        signed: verifySignature(SECRET, request.headers, request.body),
      }));
    expect(accepted.map((r) => r.id).sort()).toEqual(notices.map((r) => r.notice_id).sort());
    expect(new Set(accepted.map((r) => r.id)).size).toBe(total);
    for (const r of accepted) {
      expect(r.signed).toBe(true);
      expect(r.notice).toMatchObject({ id: r.id, kind: "done", reason: "todos_complete" });
    }
    expect(new Set(accepted.map((r) => r.notice.session.id)).size).toBe(total);
    expect(fleet.hosts.refusals()).toEqual([]);
    return notices;
  }

  it("three replicas on one database: each session's stop is notified exactly once", { timeout: 300_000 }, async () => {
    const fleet = await startFleet(4, () => ({ status: 200 }));
    await fleet.promptInWaves(2);
    await fleet.finished(240_000);
    const notices = await expectEachNotifiedOnce(fleet);
    for (const row of notices) expect(row.attempts).toBe(1);
    expect(answered).toHaveLength(fleet.sessions.length);
    expect(await fleet.all("SELECT id FROM audit_events WHERE event = 'notice_failed'")).toEqual([]);
    const byServer = new Map<string | null, number>();
    for (const row of notices) byServer.set(row.server, (byServer.get(row.server) ?? 0) + 1);
    console.log(
      `fleet notices: ${fleet.sessions.length} sessions on 3 servers, 3 replicas; ${answered.length} request(s), ` +
        `notices per server ${JSON.stringify(Object.fromEntries(byServer))}`,
    );
  });

  it(
    "the replica holding notices the receiver refused is SIGKILLed: the one taking its server over delivers each once",
    { timeout: 300_000 },
    async () => {
      let victimServer: string | undefined;
      let killed = false;
      const serverOf = new Map<string, string>();
      // The victim's server's notices are refused until the kill; the others' accepted.
      const fleet = await startFleet(3, (request) =>
        !killed && serverOf.get(sessionOf(request)) === victimServer ? { status: 503 } : { status: 200 },
      );
      for (const s of fleet.sessions) serverOf.set(s.id, `pod-${s.server}`);
      const [victimId, [server]] = await fleet.busiestOwner();
      victimServer = server;
      const victimSessions = fleet.sessions.filter((s) => `pod-${s.server}` === victimServer).map((s) => s.id);
      await fleet.promptInWaves(1);
      await waitFor(
        `a refused notice of each session of ${victimServer}`,
        async () => {
          const rows = await fleet.all<{ session_id: string }>(
            "SELECT DISTINCT session_id FROM audit_events WHERE event = 'notice_failed'",
          );
          return rows.length === victimSessions.length;
        },
        { timeoutMs: 120_000, interval: 100 },
      );
      const victim = fleet.replicaOf(victimId);
      victim.child.kill("SIGKILL");
      await victim.exited;
      killed = true;
      const refusedBeforeKill = answered.filter((a) => a.status === 503).length;
      await fleet.finished(240_000);
      const notices = await expectEachNotifiedOnce(fleet);
      const owners = await fleet.leases();
      expect(owners.find((s) => s.name === victimServer)!.owner).not.toBe(victimId);
      for (const row of notices)
        if (victimSessions.includes(row.session_id)) expect(row.attempts).toBeGreaterThanOrEqual(2);
        else expect(row.attempts).toBe(1);
      expect(answered.filter((a) => a.status === 503)).toHaveLength(refusedBeforeKill);
      console.log(
        `fleet notices after a SIGKILL: ${victimSessions.length} notices of ${victimServer} refused ${refusedBeforeKill} ` +
          `time(s) before its replica was killed, then delivered by another; attempts ` +
          `${notices.map((r) => r.attempts).join("/")}`,
      );
    },
  );
});
