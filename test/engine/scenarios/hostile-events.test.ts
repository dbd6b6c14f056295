// Random sequences of real and mangled events fed into the real plugin's hooks (fast-check): no throw escapes, and
// the invariants hold: at most one armed countdown and one continuation in flight per session, every decision
// audited, every fired countdown with exactly one injection. The plugin's SQLite file only: its timers are faked, and a
// PostgreSQL client's own timeouts would fire under them (memory-flood.test.ts runs on both).
import fc from "fast-check";
import { copyFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TodoContinuation, type TodoContinuationHooks } from "../../../src/plugin/plugin.js";
import { ev } from "../../support/events.js";
import { FakeHost } from "../../support/fake-host.js";
import { fakeSdkClient } from "../../support/fake-sdk-client.js";
import { Rows, tempFolder } from "../../support/engine-fixture.js";
import { openSqlite } from "../../../src/store/sqlite/open.js";

const SESSIONS = ["ses_a", "ses_b", "ses_c", "ses_child"];
/** Big enough to matter, small enough that a failing counterexample stays readable. */
const HUGE = "x".repeat(20_000);

const session = fc.constantFrom(...SESSIONS, "", "ses_deleted_long_ago");
const realEvent = fc.oneof(
  session.map((s) => ev.idle(s)),
  fc
    .tuple(session, fc.constantFrom("busy", "idle", "retry") as fc.Arbitrary<"busy" | "idle" | "retry">)
    .map(([s, t]) => ev.status(s, t)),
  fc
    .tuple(session, fc.constantFrom("MessageAbortedError", "APIError", "ContextOverflowError", "UnknownError"))
    .map(([s, n]) => ev.error(s, n, n === "APIError" ? "rate limited" : "x")),
  fc
    .tuple(session, fc.constantFrom("hello", "[todo-continuation id=inj_abcdefgh12]", HUGE), fc.boolean())
    .map(([s, text, synthetic]) => {
      const m = ev.userMessage(s);
      return [m, ev.textPart(s, m.properties.info.id, text, synthetic)];
    }),
  session.map((s) => ev.assistantMessage(s)),
  session.map((s) => ev.partUpdated(s)),
  session.map((s) => ev.delta(s)),
  fc
    .tuple(
      session,
      fc.array(
        fc.tuple(
          fc.string({ maxLength: 20 }),
          fc.constantFrom("pending", "in_progress", "completed", "cancelled", "blocked", "weird"),
        ),
        { maxLength: 5 },
      ),
    )
    .map(([s, t]) => ev.todos(s, t)),
  session.map((s) => ev.created(s, s === "ses_child" ? "ses_a" : undefined)),
  session.map((s) => ev.deleted(s)),
  fc.tuple(session, fc.constantFrom("que_1", "que_2"), fc.boolean()).map(([s, id, open]) => ev.question(s, id, open)),
  session.map((s) => ev.compacted(s)),
);
/** Real events with a field removed, retyped or blown up; and things that are not events at all. */
const mangled = fc.oneof(
  fc
    .tuple(realEvent, fc.constantFrom("sessionID", "info", "part", "status", "error", "todos", "properties", "type"))
    .map(([e, key]) => {
      const copy = structuredClone(Array.isArray(e) ? e[0] : e) as Record<string, unknown> & {
        properties?: Record<string, unknown>;
      };
      if (key === "properties" || key === "type") delete copy[key];
      else if (copy.properties)
        copy.properties[key] = [undefined, null, 42, HUGE, { nested: [1, 2] }, []][key.length % 6];
      return copy;
    }),
  fc.anything({ maxDepth: 3 }),
  fc.record({ type: fc.string({ maxLength: 30 }), properties: fc.anything({ maxDepth: 2 }) }),
  fc.constant({ type: "message.part.delta", properties: { sessionID: { toString: null }, messageID: 7 } }),
);
const step = fc.oneof(
  { weight: 5, arbitrary: realEvent.map((e) => ({ kind: "event" as const, e })) },
  { weight: 2, arbitrary: mangled.map((e) => ({ kind: "event" as const, e })) },
  {
    weight: 1,
    arbitrary: fc.tuple(session, fc.boolean()).map(([s, before]) => ({ kind: "tool" as const, s, before })),
  },
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 2500 }).map((ms) => ({ kind: "wait" as const, ms })) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("stop", "resume", "markRecovering", "markRecoveryComplete"), session)
      .map(([api, s]) => ({ kind: "api" as const, api, s })),
  },
);

afterEach(() => {
  vi.useRealTimers();
});

describe("hostile and malformed events into the plugin's hooks", () => {
  it("never throw and keep every invariant", { timeout: 300_000 }, async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date", "performance"] });
    let runs = 0;
    let events = 0;
    // Each run starts on a copy of one migrated file, not on an empty one: migrating and switching to WAL were about a
    // third of a run's time, and the runs are about events (plugin-database.test.ts opens new and broken files).
    const migrated = join(tempFolder("tc-prop-migrated-"), "state.db");
    (await openSqlite(migrated)).close();
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 20, maxLength: 150, size: "large" }), async (steps) => {
        runs++;
        const folder = tempFolder("tc-prop-");
        const databasePath = join(folder, "state.db");
        copyFileSync(migrated, databasePath);
        const host = new FakeHost();
        for (const s of SESSIONS) {
          host.setTodos(s, [
            ["a", "completed"],
            ["b", "pending"],
          ]);
          host.addUserMessage(s, "go");
        }
        host.sessions.set("ses_child", { id: "ses_child", parentId: "ses_a" });
        let inFlight = new Map<string, number>();
        let overlap = 0;
        const prompt = host.prompt.bind(host);
        host.prompt = async (request, signal) => {
          const n = (inFlight.get(request.sessionId) ?? 0) + 1;
          inFlight.set(request.sessionId, n);
          if (n > 1) overlap++;
          try {
            await new Promise((r) => setTimeout(r, 30));
            await prompt(request, signal);
          } finally {
            inFlight.set(request.sessionId, (inFlight.get(request.sessionId) ?? 1) - 1);
          }
        };
        const hooks = (await TodoContinuation(
          {
            client: fakeSdkClient(host),
            directory: "/p",
            worktree: "/p",
            project: { id: "p" },
            serverUrl: new URL("http://x"),
            $: undefined,
          } as never,
          {
            databasePath,
            countdownSeconds: 0.5,
            toast: true,
            hostTimeoutMs: 500,
            promptTimeoutMs: 500,
            retryBaseMs: 200,
          },
        )) as TodoContinuationHooks;
        const call = (fn: () => unknown) => {
          const result = fn();
          expect(result === undefined || result instanceof Promise).toBe(true);
          return result;
        };
        try {
          await vi.advanceTimersByTimeAsync(1);
          for (const s of steps) {
            if (s.kind === "event") {
              for (const e of Array.isArray(s.e) ? s.e : [s.e]) {
                events++;
                call(() => (hooks.event as unknown as (i: { event: unknown }) => unknown)({ event: e }));
              }
            } else if (s.kind === "tool") {
              await call(() =>
                (s.before ? hooks["tool.execute.before"] : hooks["tool.execute.after"])!(
                  { tool: "bash", sessionID: s.s, callID: "c" } as never,
                  { args: {} } as never,
                ),
              );
            } else if (s.kind === "api") {
              // A malformed session id is refused with a TypeError; nothing else may reject.
              await Promise.resolve((hooks as unknown as Record<string, (id: string) => unknown>)[s.api]!(s.s)).catch(
                (error: unknown) => {
                  if (!(error instanceof TypeError)) throw error;
                },
              );
            } else await vi.advanceTimersByTimeAsync(s.ms);
          }
          await vi.advanceTimersByTimeAsync(5000);
        } finally {
          await hooks.dispose!();
        }
        // Invariants on the file the plugin left behind.
        const store = await openSqlite(databasePath, { readonly: true });
        try {
          const rows = new Rows(store);
          const countdowns = rows.countdowns();
          const injections = rows.injections();
          const audit = rows.audit();
          const armedPerSession = new Map<string, number>();
          for (const c of countdowns)
            if (c.state === "armed")
              armedPerSession.set(String(c.session_id), (armedPerSession.get(String(c.session_id)) ?? 0) + 1);
          expect([...armedPerSession.values()].every((n) => n <= 1)).toBe(true);
          for (const c of countdowns) {
            expect(audit.some((a) => a.event === "armed" && a.detail.countdownId === c.id)).toBe(true);
            if (c.state === "fired") expect(injections.filter((i) => i.countdown_id === c.id)).toHaveLength(1);
            if (c.state === "cancelled")
              expect(
                audit.some((a) => (a.event === "cancelled" || a.event === "skipped") && a.detail.countdownId === c.id),
              ).toBe(true);
          }
          for (const i of injections) expect(countdowns.find((c) => c.id === i.countdown_id)?.state).toBe("fired");
          expect(injections.filter((i) => i.status === "pending")).toEqual([]);
          expect(overlap).toBe(0);
          expect(host.prompts.length).toBe(injections.filter((i) => i.status === "sent").length);
          // Nothing from an event without a session id was ever applied to a session.
          expect(audit.every((a) => a.session_id !== "")).toBe(true);
        } finally {
          store.close();
        }
        // Kept only when an invariant failed (300 runs a test run filled /tmp with thousands of folders).
        rmSync(folder, { recursive: true, force: true });
        inFlight = new Map();
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 300), endOnFailure: true },
    );
    console.log(
      `hostile events: ${runs} random runs, ${events} events into the plugin's hooks, no throw, invariants held`,
    );
  });
});
