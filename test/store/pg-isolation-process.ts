// A process (Node or Bun) that runs transactions and plain queries at once on one PostgreSQL connection pool, as the
// engine does under a burst of idles, and prints one JSON line: how many plain queries ran inside a transaction and
// how many transactions shared one with another.
import { sql } from "drizzle-orm";
import { openPg } from "../../src/store/pg/open.js";
import { rowsOf } from "../../src/store/pg/rows.js";

const WORKERS = Number(process.env.WORKERS ?? 24);
const DURATION_MS = Number(process.env.DURATION_MS ?? 4000);
const runtime = typeof (process.versions as Record<string, string | undefined>).bun === "string" ? "bun" : "node";
const connection = await openPg(process.env.DB!, { poolSize: Number(process.env.POOL_SIZE ?? 4) });
const running = new Set<string>();
const found = { runtime, transactions: 0, plain: 0, plainInsideTransaction: 0, sharedTransactions: 0, failed: 0 };
const errors = new Set<string>();

async function transaction(i: number): Promise<void> {
  await connection.transaction(async (tx) => {
    const [row] = rowsOf<{ txid: string }>(await tx.execute(sql`SELECT txid_current()::text AS txid, ${i}::int AS i`));
    // Two transactions of this process with one server transaction id ran on one connection at once.
    if (running.has(row!.txid)) found.sharedTransactions++;
    running.add(row!.txid);
    await tx.execute(sql`SELECT pg_sleep(0.002)`);
    running.delete(row!.txid);
  });
  found.transactions++;
}

async function plain(i: number): Promise<void> {
  // Outside a transaction a statement is its own, and this one is given no transaction id; inside one of the
  // transactions above, which took an id first, it sees that id. (A parameter, as in the engine's reads: Bun's client
  // prepares those, and its pool mishandled them beside transactions.)
  const [row] = rowsOf<{ txid: string | null }>(
    await connection.db.execute(sql`SELECT txid_current_if_assigned()::text AS txid, ${i}::int AS i`),
  );
  if (row!.txid !== null) found.plainInsideTransaction++;
  found.plain++;
}

// Workers that each go on calling, some transactions and some plain queries, for a while: connections are released
// and handed on all the time, as under the engine's bursts.
const until = Date.now() + DURATION_MS;
await Promise.all(
  Array.from({ length: WORKERS }, async (_, w) => {
    for (let i = 0; Date.now() < until; i++)
      await ((w + i) % 3 === 0 ? transaction(i) : plain(i)).catch((error: unknown) => {
        found.failed++;
        errors.add(error instanceof Error ? error.message.slice(0, 200) : String(error));
      });
  }),
);
await connection.close();
process.stdout.write(`${JSON.stringify({ ...found, errors: [...errors].slice(0, 5) })}\n`);
process.exit(0);
