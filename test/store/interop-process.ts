// A process (Node or Bun) that opens a shared database file and, per MODE, writes or reads rows. Prints one JSON line.
import { arm } from "../../src/store/changes/arm.js";
import { claim } from "../../src/store/changes/claim.js";
import { openSqlite } from "../../src/store/sqlite/open.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const mode = process.env.MODE ?? "open";
const runtime = typeof (process.versions as Record<string, string | undefined>).bun === "string" ? "bun" : "node";
try {
  const store = await openSqlite(process.env.DB!);
  const port = new SqliteStore(store);
  const result: Record<string, unknown> = { runtime, driver: store.driver, applied: store.migration.applied };
  if (mode === "write") {
    const now = Date.now();
    const id = `cd_${runtime}_${process.pid}`;
    await port.change(
      arm(
        {
          id,
          sessionId: `ses_${runtime}`,
          directory: "/shared",
          armedAt: now,
          deadlineAt: now + 1000,
          owner: runtime,
          leaseUntil: now + 5000,
          attempt: 0,
          todosOpen: 1,
          todosTotal: 2,
        },
        {},
      ),
    );
    result.claimed = await port.change(
      claim(
        {
          id: `inj_${runtime}_${process.pid}`,
          sessionId: `ses_${runtime}`,
          directory: "/shared",
          countdownId: id,
          messageId: null,
          createdAt: now,
          agent: "build",
          model: "p/m",
          variant: null,
          todosTotal: 2,
          todosOpen: 1,
          attempt: 0,
          owner: runtime,
          leaseUntil: now + 5000,
        },
        {},
      ),
    );
  }
  result.countdowns = store.raw.all("SELECT id, session_id, state, owner FROM countdowns ORDER BY id");
  result.migrations = store.raw.all<{ n: number }>('SELECT count(*) AS n FROM "__drizzle_migrations"')[0]!.n;
  store.close();
  process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (error) {
  process.stdout.write(
    `${JSON.stringify({ runtime, error: error instanceof Error ? error.message : String(error) })}\n`,
  );
}
