// Runs the store's contract (every subject of contract-cases.ts) under Bun — the Bun inside opencode-ai — on a SQLite
// file (bun:sqlite) and on the PostgreSQL server of PG_URL (Bun's SQL client; every case gets a database of its own),
// and prints one JSON line.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../src/store/open/open.js";
import { CONTRACT_CASES } from "./contract-cases.js";
import { withWorld, type ContractDatabase } from "./contract-world.js";

const url = process.env.PG_URL!;
const results: Array<{ backend: string; name: string; ok: boolean; error?: string }> = [];

async function attempt(backend: string, name: string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
    results.push({ backend, name, ok: true });
  } catch (error) {
    // drizzle wraps the driver's error ("Failed query: …"): its cause is what the database said.
    const cause = error instanceof Error && error.cause ? `\ncause: ${String(error.cause)}` : "";
    const text = error instanceof Error ? `${error.message}${cause}\n${error.stack}` : String(error);
    results.push({ backend, name, ok: false, error: text });
  }
}

for (const c of CONTRACT_CASES) {
  const folder = mkdtempSync(join(tmpdir(), "tc-bun-contract-"));
  const file: ContractDatabase = { open: (options) => openStore(join(folder, "state.db"), options) };
  await attempt("bun:sqlite", c.name, () => withWorld(file, c.run));
  rmSync(folder, { recursive: true, force: true });
}

/** A fresh database per case on the server of PG_URL. */
const { SQL } = await import("bun");
const admin = new SQL(url);
let n = 0;
for (const c of CONTRACT_CASES) {
  const name = `bun_contract_${process.pid}_${++n}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const at = new URL(url);
  at.pathname = `/${name}`;
  const database: ContractDatabase = { open: (options) => openStore(at.toString(), options) };
  await attempt("bun-sql", c.name, () => withWorld(database, c.run));
}
await admin.close();

// Exits once the line is written: an exit right after the write can cut a piped line short.
process.stdout.write(`${JSON.stringify({ runtime: `bun ${process.versions.bun}`, results })}\n`, () => process.exit(0));
