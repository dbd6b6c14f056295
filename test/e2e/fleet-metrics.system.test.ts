// A real Prometheus watches a fleet (the package's shipped scrape configuration and alerting rules): through a replica
// killed mid-run, what its scrapes counted agrees with the rows, the dead replica is down and its alert fires. The
// fleet's own guarantees under the same kill, at a larger size, are fleet.test.ts's; this run also reports the
// figures docs/performance-history.md takes from Prometheus.
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait-for.js";
import { adoptionFigures, Fleet, type Replica } from "./support/fleet.js";

describe("a fleet watched by a real Prometheus", () => {
  let fleet: Fleet | undefined;
  afterEach(async (context) => {
    if (context.task.result?.state === "fail" && fleet?.url)
      console.error(`fleet test failed: replica logs and rows kept in ${await fleet.keep()}`);
    await fleet?.stop();
    fleet = undefined;
  });

  it("counts every continuation and pages for the replica killed mid-run", { timeout: 600_000 }, async () => {
    fleet = new Fleet();
    // Three replicas serve their metrics to Prometheus: the two now, and the one started after the kill.
    await fleet.start(2, 2, undefined, 3);
    await fleet.createSessions(20);
    const started = Date.now();
    const prompting = fleet.promptInWaves(4);
    await fleet.underWay();
    const [killedId] = await fleet.busiestOwner();
    const victim = fleet.replicaOf(killedId);
    await waitFor("the replica to hold armed countdowns", async () => (await fleet!.held(killedId)).armed > 0, {
      timeoutMs: 120_000,
      interval: 100,
    });
    victim.child.kill("SIGKILL");
    const killedAt = Date.now();
    await victim.exited;
    fleet.startReplica();
    await prompting;
    await fleet.finished(300_000);
    const finishedMs = Date.now() - started;
    const verdict = await fleet.verdict();
    console.log(
      `fleet watched by Prometheus: ${fleet.sessions.length} sessions on 2 servers, continuations ` +
        `${verdict.continuations}; lost ${verdict.lost.length}, doubled ${verdict.doubled.length}; ` +
        `audit ${JSON.stringify(verdict.audit)}`,
    );
    expect(verdict.lost).toEqual([]);
    expect(verdict.doubled).toEqual([]);
    await expectMetricsAgree(fleet, victim, killedId, killedAt);
    await reportPrometheusFigures(fleet, killedId, killedAt, finishedMs);
  });
});

/**
 * What Prometheus saw agrees with SQL: the continuations its scrapes counted, plus those the killed replica sent after
 * its last scrape (written before the kill, by it: its claims), are the `injected` rows; the killed replica is down
 * and its alert fires. Each instance's counter is read at its highest (the killed replica's series ends with it).
 */
async function expectMetricsAgree(fleet: Fleet, victim: Replica, victimId: string, killedAt: number): Promise<void> {
  const prometheus = fleet.prometheus!;
  const instance = victim.target!;
  const [down] = await prometheus.until("the killed replica down", async () => {
    const up = await prometheus.query(`up{job="todo-continuation",instance="${instance}"}`);
    return up[0]?.value === 0 ? up : undefined;
  });
  expect(down).toMatchObject({ value: 0 });
  const [lastScrape] = await prometheus.query(
    `max_over_time(timestamp(todo_continuation_ready{instance="${instance}"})[1h:1s])`,
  );
  const lastScrapeMs = Math.round(lastScrape!.value * 1000);
  const [afterLastScrape] = await fleet.all<{ n: string }>(
    `SELECT count(*) AS n FROM audit_events a JOIN injections i ON i.id = a.detail::json->>'injectionId'
     WHERE a.event = 'injected' AND i.owner = ? AND a.at > ? AND a.at <= ?`,
    victimId,
    lastScrapeMs,
    killedAt,
  );
  const [injected] = await fleet.all<{ n: string }>("SELECT count(*) AS n FROM audit_events WHERE event = 'injected'");
  const sql = Number(injected!.n);
  const unscraped = Number(afterLastScrape!.n);
  // The live replicas' last scrapes come within a second or two of the end: waited for, not slept.
  const counted = await prometheus.until("Prometheus's total to reach the rows", async () => {
    const [total] = await prometheus.query(
      'sum(max_over_time(todo_continuation_continuations_total{job="todo-continuation",outcome="injected"}[1h]))',
    );
    return total && total.value + unscraped === sql ? total.value : undefined;
  });
  const firing = await prometheus.until(
    "the killed replica's alert firing",
    async () =>
      (await prometheus.alerts()).find(
        (a) =>
          a.labels.alertname === "TodoContinuationReplicaDown" &&
          a.labels.instance === instance &&
          a.state === "firing",
      ),
    150_000,
  );
  expect(firing.labels.severity).toBe("page");
  console.log(
    `fleet metrics: Prometheus counted ${counted} continuations, the killed replica sent ${unscraped} after its last ` +
      `scrape, ${sql} injected rows; ${instance} down and TodoContinuationReplicaDown firing`,
  );
}

/** The run's histogram quantile, over every replica's whole series (the killed one's up to its last scrape). */
function lateness(q: number, resumed: '=""' | '!=""'): string {
  return (
    `histogram_quantile(${q}, sum by (le) (max_over_time(` +
    `todo_continuation_fire_lateness_seconds_bucket{job="todo-continuation",resumed${resumed}}[1h])))`
  );
}

/**
 * The fleet figures of docs/performance-history.md, read from what Prometheus scraped: continuations per second (over
 * the run, and the busiest 10 s), how late fires were (countdowns armed by the replica that fired them, and adopted
 * ones); and, from the rows (a scrape a second is too coarse to time it), the time from the kill until another
 * replica adopted the killed one's countdowns, its timer fired them, and their `fired` rows were written. Reported,
 * not asserted: a figure of this machine's speed, not of correctness.
 */
async function reportPrometheusFigures(fleet: Fleet, victimId: string, killedAt: number, runMs: number): Promise<void> {
  const prometheus = fleet.prometheus!;
  const one = async (expr: string) => (await prometheus.query(expr))[0]?.value ?? Number.NaN;
  const total = await one(
    'sum(max_over_time(todo_continuation_continuations_total{job="todo-continuation",outcome="injected"}[1h]))',
  );
  const peak = await one(
    'max_over_time(sum(rate(todo_continuation_continuations_total{job="todo-continuation",outcome="injected"}[10s]))[1h:1s])',
  );
  const [p50, p99, adoptedP50, adoptedP99] = await Promise.all([
    one(lateness(0.5, '=""')),
    one(lateness(0.99, '=""')),
    one(lateness(0.5, '!=""')),
    one(lateness(0.99, '!=""')),
  ]);
  const ms = (seconds: number) => `${Math.round(seconds * 1000)} ms`;
  console.log(
    `fleet figures (Prometheus): ${total} continuations in ${(runMs / 1000).toFixed(1)} s = ` +
      `${(total / (runMs / 1000)).toFixed(2)}/s, busiest 10 s ${peak.toFixed(2)}/s; fire lateness p50 ${ms(p50)}, ` +
      `p99 ${ms(p99)}; adopted ones (every replica's) p50 ${ms(adoptedP50)}, p99 ${ms(adoptedP99)}; ` +
      (await adoptionFigures(fleet, victimId, killedAt)),
  );
}
