// A database on a disk that turns read-only or fills up, inside a real OpenCode: the plugin says so in one clear line
// of OpenCode's log, never throws into a hook, and OpenCode keeps working (in-memory enforcement when the file cannot
// be opened; paused, then resumed, when the disk fills under a running plugin). Each test mounts a small tmpfs, so
// this file runs in a namespace of its own (`npm run test:mounts`); the other broken databases are
// broken-database.test.ts's.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSqlite } from "../../src/store/sqlite/open.js";
import { cli, databaseLines, expectOpenedInMemory, runBasic, worldWith } from "./support/broken-database.js";
import type { E2E } from "./support/harness.js";
import { Tmpfs } from "./support/tmpfs.js";

let world: E2E | undefined;
let disk: Tmpfs | undefined;

afterEach(async () => {
  await world?.stop();
  world = undefined;
  disk?.dispose();
  disk = undefined;
});

describe("a database on a read-only disk: one error, in-memory enforcement, OpenCode unharmed", () => {
  it.each([
    ["a read-only file", "read-only"],
    ["a read-only folder", "read-only|cannot create"],
  ])("%s", async (kind, expected) => {
    disk = new Tmpfs(4096);
    const db = join(disk.path, "data", "todo-continuation.db");
    if (kind === "a read-only file") (await openSqlite(db)).close();
    disk.readonly();
    world = worldWith(db, { countdownSeconds: 1 });
    await world.start();
    await expectOpenedInMemory(world, db, expected);
  });
});

describe("a disk that fills up under a running plugin: one error, paused, OpenCode unharmed, resumed when it works", () => {
  it("a disk that fills up", async () => {
    disk = new Tmpfs(1024);
    const w = (world = worldWith(join(disk.path, "state.db"), { countdownSeconds: 1, storeProbeMs: 1000 }));
    await w.start();
    const first = await runBasic(w);
    await w.waitForAudit(first, "skipped:todos_complete", 20_000);
    const ballast = disk.fill();
    await runBasic(w, "stagnation");
    await w.waitFor("the pause", () => databaseLines(w).some((l) => l.includes("paused")), 30_000);
    expect(databaseLines(w)[0]).toMatch(/paused: the database .* cannot grow \(the disk is full\)/);
    const cliStop = await cli("--db", w.dbPath, "stop", "ses_x", "--force");
    expect(cliStop.code).toBe(1);
    expect(cliStop.stderr).toMatch(/full/);
    rmSync(ballast);
    await w.waitFor("the resume", () => databaseLines(w).some((l) => l.includes("resumed")), 20_000);
    expect(databaseLines(w)).toHaveLength(2);
  });
});
