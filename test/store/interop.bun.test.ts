// Node (better-sqlite3) and OpenCode's Bun (bun:sqlite) on one file: each sees the other's rows and migrations,
// and processes of both kinds opening a fresh file at the same instant do not trip over the migration.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startProcess } from "../crash/processes.js";
import { tempFolder } from "../support/engine-fixture.js";

const folders: string[] = [];
afterAll(() => {
  for (const f of folders) rmSync(f, { recursive: true, force: true });
});

async function run(runtime: "node" | "bun", env: Record<string, string>) {
  const p = startProcess(runtime, "../store/interop-process.ts", env);
  return (await p.waitFor("runtime", 30_000)) as Record<string, unknown> & {
    countdowns: Array<{ id: string; state: string }>;
  };
}

describe("Node and Bun on the same file", () => {
  it("each reads what the other wrote, and the migration is applied once", { timeout: 60_000 }, async () => {
    const folder = tempFolder();
    folders.push(folder);
    const DB = join(folder, "shared.db");
    const node = await run("node", { DB, MODE: "write" });
    expect(node).toMatchObject({ runtime: "node", driver: "better-sqlite3", claimed: true });
    expect(node.applied).toBeGreaterThan(0);
    const bun = await run("bun", { DB, MODE: "write" });
    expect(bun).toMatchObject({ runtime: "bun", driver: "bun:sqlite", applied: 0, claimed: true });
    expect(bun.countdowns.map((c) => c.id.split("_")[1])).toEqual(["bun", "node"]);
    const nodeAgain = await run("node", { DB, MODE: "read" });
    expect(nodeAgain.countdowns).toHaveLength(2);
    expect(nodeAgain.countdowns.every((c) => c.state === "fired")).toBe(true);
    expect(nodeAgain.migrations).toBe(node.migrations);
  });

  it(
    "four processes (two Node, two Bun) opening a fresh file at once all succeed, 8 times",
    { timeout: 120_000 },
    async () => {
      const folder = tempFolder();
      folders.push(folder);
      for (let round = 0; round < 8; round++) {
        const DB = join(folder, `race-${round}.db`);
        const results = await Promise.all(
          (["node", "bun", "node", "bun"] as const).map((r) => run(r, { DB, MODE: "write" })),
        );
        expect(results.map((r) => r.error)).toEqual([undefined, undefined, undefined, undefined]);
        expect(results.filter((r) => (r.applied as number) > 0)).toHaveLength(1);
        expect(new Set(results.map((r) => r.migrations))).toEqual(new Set([results[0]!.migrations]));
      }
    },
  );
});
