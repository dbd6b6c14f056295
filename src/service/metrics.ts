// The service's metrics in Prometheus's text format (prom-client). The counters are fed by what the database committed
// — each audit row and each bill, reported by the store once its transaction is over (observed-store.ts) — so they
// count exactly what SQL counts; the gauges are read from the running engines when Prometheus scrapes. Labels take only
// the audit vocabulary's values (core/reasons.ts), never a session id: a series per reason, not per session.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import {
  AUDIT_EVENTS,
  AUDIT_VOCABULARY,
  CANCEL_REASONS,
  INJECTION_FAILURE_REASONS,
  NOTICE_KINDS,
  RESUME_REASONS,
  SKIP_REASONS,
} from "../core/reasons.js";
import type { AuditValues } from "../store/audit-row.js";
import type { NewBill } from "../store/schema.js";
import { CHANNEL_TYPES } from "../notices/types.js";

/** What became of one attempt to deliver a notice. */
const NOTICE_OUTCOMES = ["sent", "retrying", "failed"] as const;

export const METRIC_PREFIX = "todo_continuation_";

/** What a transaction wrote that the metrics count: its audit rows, and the bills it inserted. */
export interface Committed {
  audit: AuditValues[];
  bills: NewBill[];
}

/** What the running engines say, read at each scrape. */
export interface LiveFigures {
  /** Countdowns armed and held in this process's memory. */
  armed: number;
  /** Engines paused because their database does not answer. */
  paused: number;
  /** OpenCode servers this process follows (1 for a single-server service, the share of a fleet replica). */
  serversFollowed: number;
}

/** How long a figure read from the database may hold up a scrape (Prometheus's own timeout is 10 s by default). */
const SCRAPE_READ_MS = 2000;

/** `read`, or a rejection once it took longer than a scrape can wait. */
function withinScrape<T>(read: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("the database read outlasted the scrape")), SCRAPE_READ_MS);
  });
  return Promise.race([read, late]).finally(() => clearTimeout(timer));
}

/** The outcomes of a continuation's prompt call: sent (`injected`), or why it failed (`injection_failed`). */
export const CONTINUATION_OUTCOMES = ["injected", ...INJECTION_FAILURE_REASONS] as const;

const TOKEN_KINDS = ["input", "output", "reasoning", "cache_read", "cache_write"] as const;
const BILL_TOKENS: Record<(typeof TOKEN_KINDS)[number], keyof NewBill> = {
  input: "inputTokens",
  output: "outputTokens",
  reasoning: "reasoningTokens",
  cache_read: "cacheReadTokens",
  cache_write: "cacheWriteTokens",
};

/** A look reads OpenCode (bounded by hostTimeoutMs) and writes one row. */
const DECISION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** A timer fires within milliseconds of its deadline; a countdown adopted after a crash, within the lease. */
const LATENESS_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Prompt calls answer in milliseconds to tens of seconds (a provider that retries). */
const PROMPT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** A statement or a transaction: well under a millisecond on a file, tens of milliseconds across a network. */
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

type Labels<L extends string> = Partial<Record<L, string>>;

export class Metrics {
  readonly registry = new Registry();
  private readonly auditEvents = this.counter(
    "audit_events_total",
    "Decisions written to the audit log, by event and reason (empty when the event has none)",
    ["event", "reason"],
    AUDIT_EVENTS.flatMap((event) => AUDIT_VOCABULARY[event].map((reason) => ({ event, reason: reason ?? "" }))),
  );
  private readonly continuations = this.counter(
    "continuations_total",
    "Continuation prompt calls by outcome: injected, or why the call failed (retrying, gave_up, timeout, not_started)",
    ["outcome"],
    CONTINUATION_OUTCOMES.map((outcome) => ({ outcome })),
  );
  private readonly skips = this.counter(
    "skips_total",
    "Idles and countdowns not continued, by the guard that said no",
    ["reason"],
    SKIP_REASONS.map((reason) => ({ reason })),
  );
  private readonly cancels = this.counter(
    "cancels_total",
    "Countdowns ended early, by what ended them",
    ["reason"],
    CANCEL_REASONS.map((reason) => ({ reason })),
  );
  private readonly decisionSeconds = new Histogram({
    name: `${METRIC_PREFIX}decision_seconds`,
    help: "How long a look took from the idle to its decision (armed, or skipped), OpenCode's answers included",
    buckets: DECISION_BUCKETS,
    registers: [this.registry],
  });
  private readonly fireLateness = new Histogram({
    name: `${METRIC_PREFIX}fire_lateness_seconds`,
    help:
      "How long after its deadline a countdown fired (the `fired` rows' lateMs), by how it came to this process: " +
      "armed here (resumed empty), or adopted after a restart, a replica's lost lease, or a database outage",
    labelNames: ["resumed"],
    buckets: LATENESS_BUCKETS,
    registers: [this.registry],
  });
  private readonly promptSeconds = new Histogram({
    name: `${METRIC_PREFIX}prompt_call_seconds`,
    help: "How long OpenCode took to accept a continuation's prompt call (injected ones)",
    buckets: PROMPT_BUCKETS,
    registers: [this.registry],
  });
  private readonly storeSeconds = new Histogram({
    name: `${METRIC_PREFIX}store_seconds`,
    help: "Database work: each state change (one transaction, by its name) and each read",
    labelNames: ["operation"],
    buckets: STORE_BUCKETS,
    registers: [this.registry],
  });
  private readonly storeFailures = this.counter(
    "store_failures_total",
    "Database work that failed, by state change (or read)",
    ["operation"],
  );
  private readonly reconnects = this.counter(
    "event_stream_reconnects_total",
    "Event streams of OpenCode servers connected again after they dropped or fell silent",
  );
  private readonly takeovers = this.counter(
    "server_takeovers_total",
    "OpenCode servers this fleet replica took over (first share, rebalance, or a replica gone)",
  );
  private readonly tokens = this.counter(
    "continuation_tokens_total",
    "Tokens the turns of continuations used, by kind, as OpenCode reported them",
    ["kind"],
    TOKEN_KINDS.map((kind) => ({ kind })),
  );
  private readonly cost = this.counter(
    "continuation_cost_total",
    "What the turns of continuations cost, in the currency of the models' configured prices",
  );
  private readonly billed = this.counter("continuation_bills_total", "Continuations billed, by how their turn ended", [
    "outcome",
  ]);
  private readonly notices = this.counter(
    "notices_total",
    "Notice deliveries by kind, channel type and outcome: sent, retrying (an attempt failed, another follows) or failed (given up)",
    ["kind", "channel_type", "outcome"],
    NOTICE_KINDS.flatMap((kind) =>
      CHANNEL_TYPES.flatMap((channel_type) => NOTICE_OUTCOMES.map((outcome) => ({ kind, channel_type, outcome }))),
    ),
  );

  /**
   * `live`: the engines' figures now. `ready`: whether the process can do its work now, as `/readyz` says (the alerting
   * rules watch it: a replica up but not ready is one that lost its database or its leases).
   */
  constructor(live: () => LiveFigures, ready?: () => Promise<boolean>, parked?: () => Promise<number>) {
    collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });
    for (const resumed of ["", ...RESUME_REASONS]) this.fireLateness.zero({ resumed });
    if (ready)
      new Gauge({
        name: `${METRIC_PREFIX}ready`,
        help: "1 while the process can do its work (its database answers; a fleet replica holds its leases), else 0",
        registers: [this.registry],
        async collect() {
          this.set((await ready()) ? 1 : 0);
        },
      });
    if (parked)
      new Gauge({
        name: `${METRIC_PREFIX}sessions_parked`,
        help: "Sessions parked now (waiting for a limit to lift, a time or a check), in the whole database",
        registers: [this.registry],
        async collect() {
          // A database that does not answer must not fail the scrape (`ready` says why): the last figure stays.
          const count = await withinScrape(parked()).catch(() => undefined);
          if (count !== undefined) this.set(count);
        },
      });
    this.gauge("countdowns_armed", "Countdowns armed now and held by this process", () => live().armed);
    this.gauge(
      "store_paused",
      "Engines of this process paused because their database does not answer (0 when all work)",
      () => live().paused,
    );
    this.gauge("servers_followed", "OpenCode servers whose event stream this process follows", () => {
      return live().serversFollowed;
    });
  }

  /** A counter whose known series start at 0, so that a rate over them exists before the first event. */
  private counter<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[] = [],
    series: ReadonlyArray<Labels<L>> = [],
  ): Counter<L> {
    const counter = new Counter<L>({ name: `${METRIC_PREFIX}${name}`, help, labelNames, registers: [this.registry] });
    for (const labels of series) counter.inc(labels, 0);
    return counter;
  }

  private gauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name: `${METRIC_PREFIX}${name}`,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** A transaction committed these rows. */
  committed({ audit, bills }: Committed): void {
    for (const row of audit) {
      const reason = row.reason ?? "";
      this.auditEvents.inc({ event: row.event, reason });
      if (row.event === "skipped") this.skips.inc({ reason });
      else if (row.event === "cancelled") this.cancels.inc({ reason });
      else if (row.event === "injected") this.continuations.inc({ outcome: "injected" });
      else if (row.event === "injection_failed") this.continuations.inc({ outcome: reason });
      else if (row.event === "notified" || row.event === "notice_failed") this.noticeDelivered(row);
      if (row.event === "armed" || row.event === "skipped") {
        const lookMs = millisecondsIn(detailOf(row), "lookMs");
        if (lookMs !== undefined) this.decisionSeconds.observe(lookMs / 1000);
      } else if (row.event === "fired") {
        const detail = detailOf(row);
        const lateMs = millisecondsIn(detail, "lateMs");
        if (lateMs !== undefined) this.fireLateness.observe({ resumed: resumedIn(detail) }, lateMs / 1000);
      } else if (row.event === "injected") {
        const latencyMs = millisecondsIn(detailOf(row), "latencyMs");
        if (latencyMs !== undefined) this.promptSeconds.observe(latencyMs / 1000);
      }
    }
    for (const bill of bills) {
      for (const kind of TOKEN_KINDS) this.tokens.inc({ kind }, Number(bill[BILL_TOKENS[kind]] ?? 0));
      this.cost.inc(Number(bill.cost ?? 0));
      this.billed.inc({ outcome: bill.outcome });
    }
  }

  /** A notice delivery's row, counted under labels from the vocabulary only (a channel's name or URL never is one). */
  private noticeDelivered(row: AuditValues): void {
    const detail = detailOf(row);
    const channelType = CHANNEL_TYPES.find((type) => type === detail.channelType);
    const kind = NOTICE_KINDS.find((k) => k === row.reason);
    if (!channelType || !kind) return;
    const outcome = row.event === "notified" ? "sent" : detail.final === true ? "failed" : "retrying";
    this.notices.inc({ kind, channel_type: channelType, outcome });
  }

  /** One piece of database work, timed: a state change by its name, or `read`. */
  storeCall(operation: string, seconds: number, failed: boolean): void {
    this.storeSeconds.observe({ operation }, seconds);
    if (failed) this.storeFailures.inc({ operation });
  }

  reconnected(): void {
    this.reconnects.inc();
  }

  tookOver(): void {
    this.takeovers.inc();
  }

  /** The exposition, as Prometheus scrapes it. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** A row's detail as an object; an unreadable one is empty (the row was written, its figures are not counted). */
function detailOf(row: AuditValues): Record<string, unknown> {
  try {
    const detail: unknown = JSON.parse(row.detail);
    return detail && typeof detail === "object" ? (detail as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A duration an audit row's detail carries, in milliseconds. */
function millisecondsIn(detail: Record<string, unknown>, key: "lookMs" | "latencyMs" | "lateMs"): number | undefined {
  const value = detail[key];
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** How a fired countdown came to this process: one of the resume reasons, or empty when it was armed here. */
function resumedIn(detail: Record<string, unknown>): string {
  const resumed = detail.resumed;
  return (RESUME_REASONS as readonly unknown[]).includes(resumed) ? (resumed as string) : "";
}
