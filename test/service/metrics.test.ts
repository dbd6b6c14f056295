// The service's metrics: every value of the audit vocabulary has its series from the start (a reason added to
// core/reasons.ts shows up as a label value, or this fails), names follow Prometheus's conventions, and what a
// transaction committed is counted once.
import { describe, expect, it } from "vitest";
import {
  AUDIT_EVENTS,
  AUDIT_VOCABULARY,
  CANCEL_REASONS,
  INJECTION_FAILURE_REASONS,
  SKIP_REASONS,
} from "../../src/core/reasons.js";
import { Metrics, METRIC_PREFIX } from "../../src/service/metrics.js";
import type { AuditValues } from "../../src/store/audit-row.js";

const live = { armed: 3, paused: 1, serversFollowed: 2 };
const metrics = () => new Metrics(() => live);

/** `name{labels} value` lines of the exposition, as a map. */
async function samples(m: Metrics): Promise<Map<string, number>> {
  const text = await m.text();
  const found = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    found.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return found;
}

const row = (event: string, reason: string | null, detail: Record<string, unknown> = {}): AuditValues => ({
  at: Date.now(),
  sessionId: "ses_1",
  directory: "/p",
  server: null,
  event,
  reason,
  detail: JSON.stringify(detail),
});

describe("the metrics' names and labels", () => {
  it("every event and reason of the audit vocabulary is a series of audit_events_total, at 0 before anything happens", async () => {
    const seen = await samples(metrics());
    for (const event of AUDIT_EVENTS)
      for (const reason of AUDIT_VOCABULARY[event])
        expect(seen.get(`${METRIC_PREFIX}audit_events_total{event="${event}",reason="${reason ?? ""}"}`)).toBe(0);
  });

  it("every skip reason, cancel reason and continuation outcome has its own series", async () => {
    const seen = await samples(metrics());
    for (const reason of SKIP_REASONS) expect(seen.get(`${METRIC_PREFIX}skips_total{reason="${reason}"}`)).toBe(0);
    for (const reason of CANCEL_REASONS) expect(seen.get(`${METRIC_PREFIX}cancels_total{reason="${reason}"}`)).toBe(0);
    for (const outcome of ["injected", ...INJECTION_FAILURE_REASONS])
      expect(seen.get(`${METRIC_PREFIX}continuations_total{outcome="${outcome}"}`)).toBe(0);
  });

  it("follow Prometheus's conventions: one prefix, counters end in _total, durations are histograms in seconds", async () => {
    const text = await metrics().text();
    const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => ({ name: name!, type: type! }));
    expect(types.length).toBeGreaterThan(10);
    for (const { name, type } of types) {
      expect(name.startsWith(METRIC_PREFIX), name).toBe(true);
      if (type === "counter") expect(name, name).toMatch(/_total$/);
      if (type === "histogram") expect(name, name).toMatch(/_seconds$/);
    }
    // No label that could grow without bound.
    expect(text).not.toMatch(/session(_id)?="/);
  });

  it("the gauges say what the engines hold when scraped", async () => {
    const seen = await samples(metrics());
    expect(seen.get(`${METRIC_PREFIX}countdowns_armed`)).toBe(3);
    expect(seen.get(`${METRIC_PREFIX}store_paused`)).toBe(1);
    expect(seen.get(`${METRIC_PREFIX}servers_followed`)).toBe(2);
    expect(seen.has(`${METRIC_PREFIX}sessions_parked`)).toBe(false);
  });

  it("the parked sessions are read from the database when scraped", async () => {
    let parked = 7;
    const m = new Metrics(
      () => live,
      undefined,
      async () => parked,
    );
    expect((await samples(m)).get(`${METRIC_PREFIX}sessions_parked`)).toBe(7);
    parked = 0;
    expect((await samples(m)).get(`${METRIC_PREFIX}sessions_parked`)).toBe(0);
  });

  it("a database that does not answer fails no scrape: the parked figure stays, the rest is read", async () => {
    let read = () => Promise.resolve(4);
    const m = new Metrics(
      () => live,
      async () => false,
      () => read(),
    );
    expect((await samples(m)).get(`${METRIC_PREFIX}sessions_parked`)).toBe(4);
    read = () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:5432"));
    const seen = await samples(m);
    expect(seen.get(`${METRIC_PREFIX}sessions_parked`)).toBe(4);
    expect(seen.get(`${METRIC_PREFIX}ready`)).toBe(0);
  });
});

describe("what a transaction committed", () => {
  it("each audit row counts once under its event and reason, and in the counter of its kind", async () => {
    const m = metrics();
    m.committed({
      audit: [
        row("armed", null, { lookMs: 40 }),
        row("fired", null, { lateMs: 7 }),
        row("fired", null, { lateMs: 3400, resumed: "lease_expired" }),
        row("skipped", "cost_budget", { lookMs: 3 }),
        row("skipped", "cost_budget"),
        row("cancelled", "user_message"),
        row("injected", null, { latencyMs: 250 }),
        row("injection_failed", "retrying"),
      ],
      bills: [],
    });
    const seen = await samples(m);
    expect(seen.get(`${METRIC_PREFIX}audit_events_total{event="skipped",reason="cost_budget"}`)).toBe(2);
    expect(seen.get(`${METRIC_PREFIX}audit_events_total{event="armed",reason=""}`)).toBe(1);
    expect(seen.get(`${METRIC_PREFIX}skips_total{reason="cost_budget"}`)).toBe(2);
    expect(seen.get(`${METRIC_PREFIX}cancels_total{reason="user_message"}`)).toBe(1);
    expect(seen.get(`${METRIC_PREFIX}continuations_total{outcome="injected"}`)).toBe(1);
    expect(seen.get(`${METRIC_PREFIX}continuations_total{outcome="retrying"}`)).toBe(1);
    expect(seen.get(`${METRIC_PREFIX}prompt_call_seconds_count`)).toBe(1);
    expect(seen.get(`${METRIC_PREFIX}prompt_call_seconds_sum`)).toBe(0.25);
    expect(seen.get(`${METRIC_PREFIX}prompt_call_seconds_bucket{le="0.25"}`)).toBe(1);
    expect(seen.get(`${METRIC_PREFIX}prompt_call_seconds_bucket{le="0.1"}`)).toBe(0);
    expect(seen.get(`${METRIC_PREFIX}fire_lateness_seconds_bucket{le="0.005",resumed=""}`)).toBe(0);
    expect(seen.get(`${METRIC_PREFIX}fire_lateness_seconds_bucket{le="0.01",resumed=""}`)).toBe(1);
    expect(seen.get(`${METRIC_PREFIX}fire_lateness_seconds_bucket{le="2.5",resumed="lease_expired"}`)).toBe(0);
    expect(seen.get(`${METRIC_PREFIX}fire_lateness_seconds_bucket{le="5",resumed="lease_expired"}`)).toBe(1);
    expect(seen.get(`${METRIC_PREFIX}fire_lateness_seconds_count{resumed="restart"}`)).toBe(0);
    // Each decision's look, as its row says: 40 ms and 3 ms.
    expect(seen.get(`${METRIC_PREFIX}decision_seconds_count`)).toBe(2);
    expect(seen.get(`${METRIC_PREFIX}decision_seconds_bucket{le="0.005"}`)).toBe(1);
    expect(seen.get(`${METRIC_PREFIX}decision_seconds_bucket{le="0.05"}`)).toBe(2);
  });

  it("a bill adds its tokens by kind and its cost", async () => {
    const m = metrics();
    const bill = {
      injectionId: "i1",
      sessionId: "ses_1",
      directory: "/p",
      messageId: "m1",
      continuedAt: 1,
      recordedAt: 2,
      outcome: "completed" as const,
      inputTokens: 1000,
      outputTokens: 200,
      reasoningTokens: 50,
      cacheReadTokens: 4000,
      cacheWriteTokens: 0,
      tokens: 5250,
      cost: 0.0125,
    };
    m.committed({ audit: [], bills: [bill, { ...bill, injectionId: "i2", outcome: "interrupted" as const }] });
    const seen = await samples(m);
    expect(seen.get(`${METRIC_PREFIX}continuation_tokens_total{kind="input"}`)).toBe(2000);
    expect(seen.get(`${METRIC_PREFIX}continuation_tokens_total{kind="cache_read"}`)).toBe(8000);
    expect(seen.get(`${METRIC_PREFIX}continuation_cost_total`)).toBe(0.025);
    expect(seen.get(`${METRIC_PREFIX}continuation_bills_total{outcome="interrupted"}`)).toBe(1);
  });
});

describe("notice deliveries", () => {
  it("are counted by kind, channel type and outcome, each series there from the start; no other label ever", async () => {
    const m = metrics();
    const before = await samples(m);
    expect(before.get(`${METRIC_PREFIX}notices_total{kind="question",channel_type="ntfy",outcome="sent"}`)).toBe(0);
    const delivery = { channel: "my-hook https://hooks.test/secret-path", channelType: "webhook", attempt: 1 };
    m.committed({
      audit: [
        row("notice_failed", "budget", { ...delivery, error: "503", retryInMs: 5000 }),
        row("notified", "budget", { ...delivery, attempt: 2 }),
        row("notice_failed", "stuck", { ...delivery, channelType: "command", final: true }),
        row("notified", "done", { ...delivery, channelType: "not-a-type" }),
      ],
      bills: [],
    });
    const text = await m.text();
    const seen = await samples(m);
    const series = (kind: string, type: string, outcome: string) =>
      seen.get(`${METRIC_PREFIX}notices_total{kind="${kind}",channel_type="${type}",outcome="${outcome}"}`);
    expect(series("budget", "webhook", "retrying")).toBe(1);
    expect(series("budget", "webhook", "sent")).toBe(1);
    expect(series("stuck", "command", "failed")).toBe(1);
    expect(series("done", "webhook", "sent")).toBe(0);
    expect(text).not.toContain("secret-path");
    expect(text).not.toContain("not-a-type");
    expect(seen.get(`${METRIC_PREFIX}audit_events_total{event="notified",reason="budget"}`)).toBe(1);
  });
});
