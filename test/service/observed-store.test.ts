// The store as the service runs it, on a real SQLite file: what a state change committed reaches the metrics once, and
// equals what the audit table holds; a change that fails (rolled back) counts as a failure and nothing else.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Metrics, METRIC_PREFIX } from "../../src/service/metrics.js";
import { AUDIT_ROWS, observeStore } from "../../src/service/observed-store.js";
import { end } from "../../src/store/changes/end.js";
import { arm } from "../../src/store/changes/arm.js";
import { recordBill } from "../../src/store/changes/record-bill.js";
import { skip } from "../../src/store/changes/skip.js";
import { change, q } from "../../src/store/script.js";
import type { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { TestFiles } from "../support/engine-context.js";
import { newRows } from "../support/new-rows.js";

const S1 = { sessionId: "ses_1", directory: "/p" };
let files: TestFiles;
let store: SqliteStore;
let metrics: Metrics;

beforeEach(async () => {
  files = new TestFiles();
  ({ store } = await files.open());
  metrics = new Metrics(() => ({ armed: 0, paused: 0, serversFollowed: 0 }));
});
afterEach(() => files.end());

async function value(series: string): Promise<number | undefined> {
  const line = (await metrics.text()).split("\n").find((l) => l.startsWith(`${METRIC_PREFIX}${series} `));
  return line === undefined ? undefined : Number(line.split(" ").at(-1));
}

describe("a store observed by the metrics", () => {
  it("knows every statement that writes an audit row (statements.ts: each one taking an AuditValues)", () => {
    const source = readFileSync(join(import.meta.dirname, "../../src/store/statements.ts"), "utf8");
    const writers = [...source.matchAll(/^\s+(\w+)\(([^)]*)\)[^;]*;/gm)]
      .filter(([, , params]) => params!.includes("AuditValues"))
      .map(([, name]) => name);
    expect(writers.length).toBeGreaterThanOrEqual(3);
    expect(Object.keys(AUDIT_ROWS).sort()).toEqual([...writers].sort());
  });

  it("counts what each state change committed, as the audit table has it", async () => {
    const observed = observeStore(store, metrics);
    const now = Date.now();
    const { countdown } = newRows(now, "host/1/a");
    await observed.change(arm(countdown("cd1"), {}));
    await observed.change(end(countdown("cd1"), { cancelled: "user_message" }, now + 10));
    // Already ended: no row, nothing counted.
    await observed.change(end(countdown("cd1"), { cancelled: "user_message" }, now + 20));
    await observed.change(skip(S1, now, "no_todos", {}));
    await observed.change(skip(S1, now, "no_todos", {}));
    const rows = await store.reader.all<{ event: string; reason: string | null; n: number }>(
      "SELECT event, reason, count(*) AS n FROM audit_events GROUP BY event, reason",
    );
    expect(rows.length).toBeGreaterThan(1);
    for (const { event, reason, n } of rows)
      expect(await value(`audit_events_total{event="${event}",reason="${reason ?? ""}"}`)).toBe(n);
    expect(await value(`skips_total{reason="no_todos"}`)).toBe(2);
    expect(await value(`cancels_total{reason="user_message"}`)).toBe(1);
    expect(await value(`store_seconds_count{operation="skip"}`)).toBe(2);
    // Reads are timed too; the store itself is untouched (its other methods are its own).
    await observed.read(q.session("ses_1"));
    expect(await value(`store_seconds_count{operation="read"}`)).toBe(1);
    expect(observed.location).toBe(store.location);
  });

  it("a bill counts once, however many times its turn is billed", async () => {
    const observed = observeStore(store, metrics);
    const now = Date.now();
    const bill = {
      injectionId: "i1",
      sessionId: "ses_1",
      directory: "/p",
      messageId: "m1",
      continuedAt: now,
      recordedAt: now,
      outcome: "completed" as const,
      tokens: 1500,
      inputTokens: 1200,
      outputTokens: 300,
      cost: 0.02,
    };
    expect(await observed.change(recordBill(S1, bill, now))).toBe(true);
    expect(await observed.change(recordBill(S1, bill, now))).toBe(false);
    expect(await value(`continuation_tokens_total{kind="input"}`)).toBe(1200);
    expect(await value(`continuation_cost_total`)).toBe(0.02);
  });

  it("a change that fails is rolled back: a failure, and none of its rows", async () => {
    const observed = observeStore(store, metrics);
    const failing = change("doomed", "ses_1", function* () {
      yield* q.audit({
        at: Date.now(),
        sessionId: "ses_1",
        directory: "/p",
        server: null,
        event: "skipped",
        reason: "no_todos",
        detail: "{}",
      });
      throw new Error("the script failed after writing");
    });
    await expect(observed.change(failing)).rejects.toThrow("the script failed after writing");
    expect(await store.reader.all("SELECT * FROM audit_events")).toEqual([]);
    expect(await value(`skips_total{reason="no_todos"}`)).toBe(0);
    expect(await value(`store_failures_total{operation="doomed"}`)).toBe(1);
  });
});
