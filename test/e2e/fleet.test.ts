// A fleet: replicas of `todo-continuation serve --db postgres://…` (the built CLI) share OpenCode servers through the
// `servers` table, on one real PostgreSQL database (support/fleet.ts). Sessions go idle with open todos while replicas
// are killed (SIGKILL) or frozen past their lease (SIGSTOP), or the database stops; every eligible idle must be
// continued exactly once. The frozen replica runs on real `opencode serve` processes, the fleet following real
// OpenCode; the kill of 200 sessions and the database outage test the fleet's own logic, on simulated servers (held to
// the real one by sim-opencode.test.ts). What Prometheus sees of such a run: fleet-metrics.system.test.ts.
import { afterEach, describe, expect, it } from "vitest";
import { launchBrowser } from "../support/browser.js";
import { PostgresServer } from "../support/postgres.js";
import { sleep, waitFor } from "../support/wait-for.js";
import { adoptionFigures, Fleet, LEASE_MS, TICK_MS } from "./support/fleet.js";
import { CONTINUATIONS_PER_SESSION, SimulatedOpenCode } from "./support/fleet-hosts.js";

describe("a fleet of service replicas following OpenCode servers on one PostgreSQL database", () => {
  let fleet: Fleet | undefined;
  afterEach(async (context) => {
    if (context.task.result?.state === "fail" && fleet?.url)
      console.error(`fleet test failed: replica logs and rows kept in ${await fleet.keep()}`);
    else if (process.env.TC_KEEP_FLEET && fleet?.url) console.log(`fleet kept in ${await fleet.keep()}`);
    await fleet?.stop();
    fleet = undefined;
  });

  it(
    "continues every eligible idle of 200 sessions on 4 servers exactly once while a replica is killed and another started",
    { timeout: 900_000 },
    async () => {
      fleet = new Fleet({}, new SimulatedOpenCode());
      await fleet.start(4, 3);
      await fleet.createSessions(50);
      const started = Date.now();
      const prompting = fleet.promptInWaves(10);
      // Mid-run (the first continuations are out): SIGKILL the replica that follows the most servers while it holds
      // armed countdowns.
      await fleet.underWay();
      const [killedId, killedServers] = await fleet.busiestOwner();
      const victim = fleet.replicaOf(killedId);
      const atKill = await waitFor(
        "the replica to hold armed countdowns",
        async () => {
          const held = await fleet!.held(killedId);
          return held.armed > 0 && held;
        },
        { timeoutMs: 120_000, interval: 100 },
      );
      victim.child.kill("SIGKILL");
      const killedAt = Date.now();
      await victim.exited;
      const [killed] = await fleet.all<{ heartbeat_at: string }>(
        "SELECT heartbeat_at FROM replicas WHERE id = ?",
        killedId,
      );
      const lastHeartbeat = Number(killed!.heartbeat_at);
      const takenOver = await waitFor(
        "the killed replica's servers taken over",
        async () => {
          const leases = (await fleet!.leases()).filter((s) => killedServers.includes(s.name));
          return leases.every((s) => s.alive && s.owner !== killedId) && leases;
        },
        { timeoutMs: 30_000, interval: 100 },
      );
      const takeoverWallMs = Date.now() - killedAt;
      const takeoverMs = Math.max(...takenOver.map((s) => Number(s.owned_since) - lastHeartbeat));
      fleet.startReplica();
      await prompting;
      await fleet.finished(600_000);
      const finishedMs = Date.now() - started;
      const verdict = await fleet.verdict();
      const shares = await fleet.expectFairShares(3);
      console.log(
        `fleet: 4 OpenCode servers, 3 replicas + 1 started after a SIGKILL, ${fleet.sessions.length} sessions; ` +
          `all finished in ${(finishedMs / 1000).toFixed(1)} s; continuations ${verdict.continuations} ` +
          `(expected ${fleet.sessions.length * CONTINUATIONS_PER_SESSION}); lost ${verdict.lost.length}, doubled ${verdict.doubled.length}; ` +
          `the killed replica held ${killedServers.length} server(s), ${atKill.armed} armed countdown(s) and ${atKill.pending} pending continuation(s); ` +
          `takeover ${takeoverMs} ms after its last heartbeat by the database's clock (lease ${LEASE_MS} + round ${TICK_MS}), ` +
          `${takeoverWallMs} ms after the kill; final shares ${shares.join("/")}; audit ${JSON.stringify(verdict.audit)}`,
      );
      expect(verdict.lost).toEqual([]);
      expect(verdict.doubled).toEqual([]);
      expect(verdict.open).toEqual([]);
      await fleet.expectRowsAgree(verdict.sent);
      // Its countdowns were adopted by the replicas that took its servers over.
      expect(await fleet.adoptedFrom(killedId)).toBeGreaterThanOrEqual(1);
      // Taken over within the lease plus one round (and some slack for a loaded 2-core machine's scheduling).
      expect(takeoverMs).toBeLessThanOrEqual(LEASE_MS + TICK_MS + 1500);
      // The servers refused none of the replicas' calls (as OpenCode refuses a payload it rejects).
      expect(fleet.hosts.refusals()).toEqual([]);
      console.log(`fleet figures: ${await adoptionFigures(fleet, killedId, killedAt)}`);
    },
  );

  it(
    "a replica frozen past its lease (SIGSTOP) loses its servers and countdowns, and sends nothing when it wakes",
    { timeout: 600_000 },
    async () => {
      fleet = new Fleet();
      await fleet.start(2, 2);
      // 16 sessions: every turn is a real OpenCode's (40 sessions cost its servers 68 CPU-s, 16 cost 33); the frozen
      // replica still holds several armed countdowns to lose (7 in a quiet run).
      await fleet.createSessions(8);
      const prompting = fleet.promptInWaves(4);
      await fleet.underWay();
      const [frozenId, frozenServers] = await fleet.busiestOwner();
      const frozen = fleet.replicaOf(frozenId);
      const atFreeze = await waitFor(
        "the replica to hold armed countdowns",
        async () => {
          const held = await fleet!.held(frozenId);
          return held.armed > 0 && held;
        },
        { timeoutMs: 120_000, interval: 100 },
      );
      frozen.child.kill("SIGSTOP");
      // Its process lives (its pid says nothing): only its heartbeat, by the database's clock, lets the other take over.
      await waitFor(
        "the frozen replica's servers taken over",
        async () =>
          (await fleet!.leases())
            .filter((s) => frozenServers.includes(s.name))
            .every((s) => s.alive && s.owner !== frozenId),
        { timeoutMs: 30_000, interval: 100 },
      );
      // It stays frozen one more lease after the takeover: how long the scenario freezes it, not a wait for an outcome.
      await sleep(LEASE_MS);
      frozen.child.kill("SIGCONT");
      await prompting;
      await fleet.finished(300_000);
      const verdict = await fleet.verdict();
      const shares = await fleet.expectFairShares(2);
      console.log(
        `fleet, frozen replica: ${fleet.sessions.length} sessions on 2 servers; it held ${atFreeze.armed} armed countdown(s) ` +
          `and ${atFreeze.pending} pending continuation(s) when frozen; continuations ${verdict.continuations}; ` +
          `lost ${verdict.lost.length}, doubled ${verdict.doubled.length}; final shares ${shares.join("/")}; audit ${JSON.stringify(verdict.audit)}`,
      );
      expect(verdict.lost).toEqual([]);
      expect(verdict.doubled).toEqual([]);
      expect(verdict.open).toEqual([]);
      await fleet.expectRowsAgree(verdict.sent);
      // Its countdowns were taken over although its process lived: by its heartbeat's age, not by its pid.
      expect(await fleet.adoptedFrom(frozenId)).toBeGreaterThanOrEqual(1);
      // It woke and let its stale followers go: servers another replica still follows, or one given back to it by the
      // rebalancing before its first round (followed afresh). After rebalancing it follows one again.
      expect(frozen.log).toMatch(/letting server pod-\d go: another replica (follows it now|followed it while)/);
      // OpenCode refused none of the replicas' calls (it logs a warning for each payload it rejects).
      expect(fleet.hosts.refusals()).toEqual([]);
    },
  );

  it(
    "200 sessions parked to one limit's reset on two replicas, one killed during the park: each woken once, spread over the jitter window",
    { timeout: 600_000 },
    async () => {
      // Every session's first continuation fails on a Claude subscription's limit, whose window resets at one moment
      // for all of them: far enough ahead for half to be parked first, on a loaded machine too (15 s alone, 40 s
      // beside two more test runs).
      const resetAt = Math.ceil((Date.now() + 50_000) / 1000) * 1000;
      const message = "This request would exceed your account's rate limit. Please try again later.";
      const limit = {
        message,
        statusCode: 429,
        isRetryable: true,
        responseHeaders: {
          "anthropic-ratelimit-unified-reset": String(resetAt / 1000),
          "content-type": "application/json",
        },
        responseBody: JSON.stringify({ type: "error", error: { type: "rate_limit_error", message } }),
      };
      const jitterMs = 10_000;
      fleet = new Fleet(
        { wakeJitterSeconds: jitterMs / 1000 },
        new SimulatedOpenCode((_, turn) => (turn === 2 ? limit : undefined)),
      );
      await fleet.start(4, 2);
      await fleet.createSessions(50);
      const prompting = fleet.promptInWaves(10);
      const parked = async () =>
        Number((await fleet!.all<{ n: string }>("SELECT count(*) AS n FROM parks WHERE state = 'parked'"))[0]!.n);
      const atKill = await waitFor(
        "half the sessions parked",
        async () => {
          const n = await parked();
          return n >= 100 && n;
        },
        { timeoutMs: 45_000, interval: 100 },
      );
      const [killedId, killedServers] = await fleet.busiestOwner();
      const victim = fleet.replicaOf(killedId);
      victim.child.kill("SIGKILL");
      const killedAt = Date.now();
      await victim.exited;
      await prompting;
      await fleet.finished(300_000);
      // The turn that failed was a continuation too: each session took one more than its todos need.
      const owed = CONTINUATIONS_PER_SESSION + 1;
      const verdict = await fleet.verdict(owed);
      const parks = await fleet.all<{ session_id: string; state: string; end_reason: string }>(
        "SELECT session_id, state, end_reason FROM parks",
      );
      const woke = (
        await fleet.all<{ session_id: string; at: string }>(
          "SELECT session_id, at FROM audit_events WHERE event = 'woke'",
        )
      ).map((r) => ({ session: r.session_id, at: Number(r.at) }));
      const [first, last] = [Math.min(...woke.map((w) => w.at)), Math.max(...woke.map((w) => w.at))];
      // No continuation went out while a session was parked: none between its park and the end of its wait.
      const [{ n: sentWhileParked }] = (await fleet.all<{ n: string }>(
        `SELECT count(*) AS n FROM injections i JOIN parks p ON p.session_id = i.session_id
          WHERE i.created_at > p.parked_at AND i.created_at < p.wake_at`,
      )) as [{ n: string }];
      console.log(
        `fleet, parked: ${fleet.sessions.length} sessions on 4 servers, 2 replicas; ${atKill} parked when the replica ` +
          `holding ${killedServers.length} server(s) was killed, ${resetAt - killedAt} ms before the reset; ` +
          `woken ${first - resetAt}–${last - resetAt} ms after it (jitter ${jitterMs} ms); continuations ` +
          `${verdict.continuations}; lost ${verdict.lost.length}, doubled ${verdict.doubled.length}; audit ${JSON.stringify(verdict.audit)}`,
      );
      expect(killedAt).toBeLessThan(resetAt);
      expect(verdict.lost).toEqual([]);
      expect(verdict.doubled).toEqual([]);
      expect(verdict.open).toEqual([]);
      await fleet.expectRowsAgree(verdict.sent, owed);
      // Each session parked once and woken once, by its time, whichever replica was left to wake it.
      expect(parks).toHaveLength(fleet.sessions.length);
      expect(parks.filter((p) => p.state !== "woke" || p.end_reason !== "time")).toEqual([]);
      expect(woke.map((w) => w.session).sort()).toEqual(fleet.sessions.map((s) => s.id).sort());
      expect(Number(sentWhileParked)).toBe(0);
      // Not before the reset, and spread over the window rather than in one second.
      expect(first).toBeGreaterThanOrEqual(resetAt);
      expect(last - first).toBeGreaterThan(jitterMs / 2);
    },
  );

  it(
    "PostgreSQL stopped mid-run and started again: the replicas pause, resume, and every idle is continued once",
    { timeout: 600_000 },
    async () => {
      // A server of its own: stopping the run's shared one would break whatever else uses it.
      const postgres = await PostgresServer.start();
      try {
        fleet = new Fleet({}, new SimulatedOpenCode());
        await fleet.start(2, 2, await postgres.createDatabase("fleet"), 0, 2);
        await fleet.createSessions(20);
        const prompting = fleet.promptInWaves(4);
        await waitFor(
          "countdowns armed",
          async () => (await fleet!.all("SELECT id FROM countdowns WHERE state = 'armed'")).length > 0,
          { timeoutMs: 120_000, interval: 100 },
        );
        postgres.stop("fast");
        const stoppedAt = Date.now();
        // Down for three leases (several rounds of every replica): how long the scenario's outage lasts.
        await sleep(3 * LEASE_MS);
        postgres.start();
        const downMs = Date.now() - stoppedAt;
        await prompting;
        await fleet.finished(300_000);
        const verdict = await fleet.verdict();
        const shares = await fleet.expectFairShares(2);
        console.log(
          `fleet, database down ${downMs} ms mid-run: ${fleet.sessions.length} sessions on 2 servers; continuations ` +
            `${verdict.continuations}; lost ${verdict.lost.length}, doubled ${verdict.doubled.length}; final shares ` +
            `${shares.join("/")}; audit ${JSON.stringify(verdict.audit)}`,
        );
        expect(verdict.lost).toEqual([]);
        expect(verdict.doubled).toEqual([]);
        expect(verdict.open).toEqual([]);
        await fleet.expectRowsAgree(verdict.sent);
        expect(fleet.hosts.refusals()).toEqual([]);
        // Each replica said so once, and again when the database answered, without crashing.
        for (const replica of fleet.replicas) {
          expect(replica.child.exitCode).toBeNull();
          expect(replica.log.match(/fleet round failed/g) ?? []).toHaveLength(1);
          expect(replica.log).toContain("the fleet's database answers again");
        }
        // Each replica's page, in a real browser, lists every session of the fleet on its server, and the servers
        // with their followers.
        const browser = await launchBrowser();
        try {
          const page = await browser.newPage();
          for (const replica of fleet.replicas) {
            await page.goto(`http://${replica.target}/?limit=100`);
            const listed = await page.locator("[data-session]").evaluateAll((lines) =>
              lines.map((line) => ({
                id: line.getAttribute("data-session"),
                server: line.querySelector(".project .muted")?.textContent,
              })),
            );
            expect(new Map(listed.map(({ id, server }) => [id, server]))).toEqual(
              new Map(fleet.sessions.map((s) => [s.id, `pod-${s.server}`])),
            );
            await page.goto(`http://${replica.target}/charts`);
            const followers = await page.locator("td[data-label='followed by']").allTextContents();
            expect(followers.map((f) => f.trim()).sort()).toEqual((await fleet.leases()).map((l) => l.owner).sort());
          }
        } finally {
          await browser.close();
        }
      } catch (error) {
        // Kept while the database still runs: this test's server is destroyed before the suite's afterEach.
        console.error(`fleet test failed: replica logs and rows kept in ${await fleet?.keep()}`);
        throw error;
      } finally {
        await fleet?.stop();
        fleet = undefined;
        await postgres.destroy();
      }
    },
  );
});
