// A flood of sessions the engine has never seen (each a status and a todo list, none idle) keeps at most the memory
// cap of sessions and no timer: on the run's backend, SQLite or PostgreSQL.
import { describe, expect, it } from "vitest";
import { ev } from "../../support/events.js";
import { startEngine } from "../../support/engine-fixture.js";

describe("memory under a flood of sessions", () => {
  it(
    "stays bounded: 60,000 events for 30,000 distinct sessions leave at most the memory cap",
    { timeout: 120_000 },
    async () => {
      const f = await startEngine({ config: { toast: false } });
      try {
        const before = process.memoryUsage().heapUsed;
        for (let i = 0; i < 30_000; i++) {
          const s = `ses_flood_${i}`;
          f.enforcer.handleEvent(ev.status(s, i % 2 ? "busy" : "retry"));
          f.enforcer.handleEvent(ev.todos(s, [["a", "pending"]]));
        }
        const stats = f.enforcer.stats();
        expect(stats.sessionsInMemory).toBeLessThanOrEqual(5000);
        expect(stats.timers).toBe(0);
        globalThis.gc?.();
        const growthMb = (process.memoryUsage().heapUsed - before) / 1e6;
        console.log(
          `flood: 60,000 events, ${stats.sessionsInMemory} sessions kept in memory, heap growth ${growthMb.toFixed(1)} MB`,
        );
        expect(growthMb).toBeLessThan(100);
      } finally {
        await f.destroy();
      }
    },
  );
});
