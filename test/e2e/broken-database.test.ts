// The plugin's database broken in every way a file can break without a disk of its own, inside a real OpenCode: the
// plugin says so in one clear line of OpenCode's log, never throws into a hook, and OpenCode keeps working (with
// in-memory enforcement when the file cannot even be opened; paused, then resumed, when it breaks under a running
// plugin). The CLI reports each case clearly too. A truncated file and one deleted while open run on the simulated
// OpenCode (durability-on-sim.test.ts); a disk that turns read-only or fills up: broken-disk.mounts.test.ts.
import Database from "better-sqlite3";
import { chmodSync, chownSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { opencodeBinary, ROOT } from "../crash/processes.js";
import { otherAccount, reachableCheckout, reachableCopy } from "../support/other-account.js";
import { tempFolder } from "../support/temp-folders.js";
import { openSqlite } from "../../src/store/sqlite/open.js";
import {
  brokenFile,
  databaseLines,
  expectOpenedInMemory,
  runBasic,
  runCli,
  worldWith,
} from "./support/broken-database.js";
import { sleep } from "../support/wait-for.js";
import { E2E } from "./support/harness.js";
import { script } from "./scenarios.js";

/** `storeProbeMs` of the locked-file test. */
const PROBE_MS = 1000;
let world: E2E | undefined;

afterEach(async () => {
  await world?.stop();
  world = undefined;
});

describe("a database that cannot be opened: one error, in-memory enforcement, OpenCode unharmed", () => {
  // A truncated file: durability-on-sim.test.ts, on the simulated OpenCode.
  const kind = "a file of garbage bytes";
  let db: string;
  let garbage: E2E;
  // The plugin opens its file when OpenCode starts: the file is broken first, and OpenCode started here, under a
  // hook's budget as every e2e suite's server is, rather than in its test's 30 s.
  beforeAll(async () => {
    db = await brokenFile(kind);
    garbage = worldWith(db, { countdownSeconds: 1 });
    await garbage.start();
  }, 120_000);
  afterAll(async () => {
    await garbage?.stop();
  });

  it(kind, async () => {
    await expectOpenedInMemory(garbage, db, "not a valid SQLite database");
  });
});

describe("a database its user may not write (file permissions)", () => {
  // For root a file's permissions stop nothing: OpenCode (and the CLI) then run as an unprivileged account, from
  // copies it can reach wherever this checkout is. As any other user they run as that user, from the checkout.
  const account = otherAccount();
  const user = account ? { uid: account.uid, gid: account.gid } : undefined;
  let checkout: ReturnType<typeof reachableCheckout>;
  let binary: string;

  beforeAll(() => {
    checkout = reachableCheckout(ROOT);
    const opencode = opencodeBinary();
    // Named by size and time: the copy is kept across runs, and must change with the binary.
    const { size, mtimeMs } = statSync(opencode);
    binary = join(reachableCopy(dirname(opencode), `opencode-${size}-${Math.round(mtimeMs)}`), basename(opencode));
  }, 120_000);
  afterAll(() => checkout?.dispose());

  it.each([
    ["a read-only file", /attempt to write a readonly database|read-only|readonly/],
    ["a read-only folder", /unable to open|cannot create|permission denied|read-only|readonly/i],
  ])(
    "%s",
    async (kind, expected) => {
      const dir = await tmpDir();
      const db = join(dir, "todo-continuation.db");
      if (kind === "a read-only file") {
        // A file readable by all, in a folder the user owns: only the file's permission stands in the way.
        (await openSqlite(db)).close();
        chmodSync(db, 0o444);
        if (user) chownSync(dir, user.uid, user.gid);
      } else {
        // A folder the user may enter but not write in.
        chmodSync(dir, 0o555);
      }
      const before = kind === "a read-only file" ? readFileSync(db) : undefined;
      const pluginSpec = pathToFileURL(join(checkout.root, "src", "index.ts")).href;
      world = new E2E(script, { databasePath: db, countdownSeconds: 1 }, { user, binary, pluginSpec });
      await world.start();
      // The process under test is really the unprivileged user's (spawning fails, rather than run as root, if not).
      expect(statSync(`/proc/${world.server.pid}`).uid).toBe(user?.uid ?? process.getuid!());
      const id = await runBasic(world);
      await world.waitFor("the continuation", () => world!.continuationRequests("basic").length === 1, 20_000);
      const lines = databaseLines(world);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(expected);
      expect(lines[0]).toContain("Continuing with an in-memory database");
      expect(await world.todos(id)).toHaveLength(3);
      if (before) expect(readFileSync(db).equals(before)).toBe(true);
      else expect(readdirSync(dir)).toEqual([]);
      const stop = await runCli(["--db", db, "stop", "ses_x", "--force"], user, checkout.root);
      expect(stop.code).toBe(1);
      expect(stop.stderr).toMatch(expected);
    },
    60_000,
  );
});

describe("a database that breaks under a running plugin: one error, paused, OpenCode unharmed, resumed when it works", () => {
  // Deleted while OpenCode has it open: durability-on-sim.test.ts, on the simulated OpenCode. The locked file stays
  // here: it is OpenCode's own Bun that must hold a write back while another process has the lock.
  let locked: E2E;
  beforeAll(async () => {
    // A stagnation limit of 1: once resumed, one continuation and its turn make the end of the run.
    locked = worldWith(join(await tmpDir(), "state.db"), {
      countdownSeconds: 1,
      storeProbeMs: PROBE_MS,
      stagnationLimit: 1,
    });
    await locked.start();
  }, 120_000);
  afterAll(async () => {
    await locked?.stop();
  });

  // Its own waits (a first turn, the arm, the pause, the resume, a continuation run) allow far more than the default
  // 30 s, which a busy machine's first OpenCode turn alone can take: the budget is theirs.
  it("locked by another process for longer than the busy timeout", { timeout: 90_000 }, async () => {
    const w = locked;
    await runBasic(w, "stagnation");
    await w.waitForAudit(await firstSession(w), "armed");
    const locker = new Database(w.dbPath);
    locker.exec("BEGIN EXCLUSIVE");
    const lockedAt = Date.now();
    await w.waitFor("the pause", () => databaseLines(w).some((l) => l.includes("paused")), 20_000);
    const pausedMs = Date.now() - lockedAt;
    // OpenCode answers while the file is locked.
    const ping = Date.now();
    await w.server.client.session.list({ throwOnError: true });
    expect(Date.now() - ping).toBeLessThan(1500);
    // The lock is held across three probes (no probe is visible from outside): the plugin must stay paused through
    // failed probes, and say so once, not just until its first probe. A cause of the scenario, not a wait for an outcome.
    await sleep(3 * PROBE_MS);
    locker.exec("ROLLBACK");
    locker.close();
    const releasedAt = Date.now();
    await w.waitFor("the resume", () => databaseLines(w).some((l) => l.includes("resumed")), 20_000);
    const lines = databaseLines(w);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/paused: the database .* is locked by another process/);
    console.log(
      `locked: paused ${pausedMs} ms after the lock, resumed ${Date.now() - releasedAt} ms after the release`,
    );
    // Working again: the stagnation scenario runs to its end.
    await w.waitForAudit(await firstSession(w), "skipped:stagnation", 60_000);
  });
});

async function tmpDir(): Promise<string> {
  return tempFolder("tc-broken-");
}

async function firstSession(w: E2E): Promise<string> {
  const list = await w.server.client.session.list({ throwOnError: true });
  return (list.data as Array<{ id: string; title: string }>).find((s) => s.title === "stagnation")!.id;
}
