// The built `todo-continuation` binary, run as a process against real database files.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { park } from "../../src/store/changes/park.js";
import { recordBill } from "../../src/store/changes/record-bill.js";
import { changeSession } from "../../src/store/changes/change-session.js";
import { endVerification, startVerification } from "../../src/store/changes/verify.js";
import { openStore } from "../../src/store/open/open.js";
import { cli, requireBuiltCli } from "../support/cli.js";
import { ev } from "../support/events.js";
import { drained, startEngine, tempFolder, type EngineFixture } from "../support/engine-fixture.js";

let f: EngineFixture;
const S = "ses_cli_main";
const OTHER = "ses_cli_other";

/**
 * The fake host starts no turn for a continuation: with the default start timeout, a slow run would see it
 * `not_started` and retry, arming the main session again while the tests read the countdowns.
 */
const QUIET = { toast: false, retryBaseMs: 60_000, startTimeoutMs: 600_000 };

beforeAll(async () => {
  requireBuiltCli();
  f = await startEngine({ config: { ...QUIET, countdownSeconds: 0.05 } });
  f.host.addUserMessage(S, "go");
  f.host.setTodos(S, [
    ["a", "completed"],
    ["b", "pending"],
  ]);
  f.enforcer.handleEvent(ev.idle(S));
  await drained(f);
  f.host.setTodos(OTHER, [["a", "completed"]]);
  f.enforcer.handleEvent(ev.idle(OTHER));
  await f.enforcer.settled();
  // One countdown left armed (long), owned by this live test process.
  f.host.setTodos("ses_cli_armed", [["x", "pending"]]);
  await f.close();
  f = await startEngine({ folder: f.folder, host: f.host, config: { ...QUIET, countdownSeconds: 3600 } });
  f.enforcer.handleEvent(ev.idle("ses_cli_armed"));
  await f.enforcer.settled();
}, 30_000);

afterAll(async () => {
  await f.destroy();
});

describe("todo-continuation CLI", () => {
  it("history shows the continuation as a table, and as JSON", async () => {
    const json = await cli(["--db", f.dbPath, "--json", "history", "--session", S]);
    const rows = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    expect(rows).toMatchObject([{ session_id: S, status: "sent", todos_open: 1, todos_total: 2, agent: "build" }]);
    // A loaded machine can fire the 50 ms countdown a little late: the cell says what the row recorded.
    const lateMs = rows[0]!.late_ms as number;
    const sent = lateMs <= 50 ? "on time" : `late by ${(lateMs / 1000).toFixed(1)} s`;
    const table = await cli(["--db", f.dbPath, "history"]);
    expect(table.code).toBe(0);
    const [header, row] = table.stdout.trim().split("\n");
    expect(header).toMatch(/^TIME\s+SESSION\s+STATUS\s+AGENT\s+MODEL\s+OPEN\s+SENT\s+TRY\s+ERROR$/);
    expect(row).toMatch(
      new RegExp(
        `^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\s+${S}\\s+sent\\s+build\\s+scripted/model-1\\s+1/2\\s+${sent}\\s+1$`,
      ),
    );
    expect(JSON.parse((await cli(["--db", f.dbPath, "--json", "history", "--session", "nobody"])).stdout)).toEqual([]);
  });

  it("history of a session the database never saw says so, rather than that nothing was sent yet", async () => {
    const unknown = await cli(["--db", f.dbPath, "history", "--session", "ses_nope"]);
    expect(unknown.code).toBe(0);
    expect(unknown.stdout).toContain(`no session ses_nope in ${f.dbPath}: nothing was ever recorded for it.`);
    expect(unknown.stdout).not.toContain("no continuations recorded yet");
  });

  it("audit and cost of a session the database never saw say so too; of a known one, that nothing matched", async () => {
    for (const command of ["audit", "cost"]) {
      const unknown = await cli(["--db", f.dbPath, command, "--session", "ses_nope"]);
      expect(unknown.code, command).toBe(0);
      expect(unknown.stdout, command).toContain(
        `no session ses_nope in ${f.dbPath}: nothing was ever recorded for it.`,
      );
    }
    const known = await cli(["--db", f.dbPath, "audit", "--session", S, "--reason", "gave_up"]);
    expect(known.stdout).toContain("no matching decisions");
  });

  it("audit filters by session, reason and event", async () => {
    const all = JSON.parse((await cli(["--db", f.dbPath, "--json", "audit", "--session", S])).stdout) as Array<{
      event: string;
    }>;
    expect(all.map((r) => r.event)).toEqual(["armed", "fired", "injected"]);
    const skips = await cli(["--db", f.dbPath, "audit", "--reason", "todos_complete"]);
    expect(skips.code).toBe(0);
    expect(skips.stdout).toContain(OTHER);
    expect(skips.stdout).toMatch(/skipped\s+todos_complete\s+stage=idle total=1 completed=1/);
    const fired = JSON.parse(
      (await cli(["--db", f.dbPath, "--json", "audit", "--event", "fired", "--since", "1h"])).stdout,
    ) as Array<{ detail: { countdownId: string } }>;
    expect(fired).toHaveLength(1);
    expect(fired[0]!.detail.countdownId).toMatch(/^cd_/);
  });

  it("status lists the armed countdown with its owner and lease, and stop/resume change it", async () => {
    const status = await cli(["--db", f.dbPath, "status"]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(
      /Armed countdowns \(1\):\nSESSION\s+FIRES\s+OPEN\s+OWNER\s+LEASE\s+DIRECTORY\nses_cli_armed\s+in 59 min \d+ s\s+1\/1\s+\S+\s+held, \d+\.\d s left\s+\/work\/project/,
    );
    expect(status.stdout).toContain("Stopped sessions: none");

    const stop = await cli(["--db", f.dbPath, "stop", "ses_cli_armed"]);
    expect(stop).toMatchObject({ code: 0 });
    expect(stop.stdout).toContain("stopped ses_cli_armed (its armed countdown was cancelled)");
    expect((await cli(["--db", f.dbPath, "stop", "ses_cli_armed"])).stdout).toContain("was already stopped");
    const json = JSON.parse((await cli(["--db", f.dbPath, "--json", "status"])).stdout) as {
      armed: Array<{ session_id: string }>;
      stopped: Array<{ session_id: string; stop_source: string }>;
    };
    // Once, in a loaded CI run, the fixture's engine had armed the main session again by here: say how, if it recurs.
    expect(json.armed, JSON.stringify(f.rows.audit(S))).toEqual([]);
    expect(json.stopped).toMatchObject([{ session_id: "ses_cli_armed", stop_source: "cli" }]);
    expect((await cli(["--db", f.dbPath, "resume", "ses_cli_armed"])).stdout).toContain("resumed ses_cli_armed");
    expect((await cli(["--db", f.dbPath, "resume", "ses_cli_armed"])).stdout).toContain("was not stopped");
    const trail = JSON.parse(
      (await cli(["--db", f.dbPath, "--json", "audit", "--session", "ses_cli_armed"])).stdout,
    ) as Array<{ event: string; reason: string }>;
    expect(trail.map((r) => `${r.event}:${r.reason}`)).toEqual([
      "armed:null",
      "stopped:cli",
      "cancelled:stopped",
      "unstopped:cli",
    ]);
  });

  it("status lists a session the user took over, and resume lifts the pause", async () => {
    f.store.raw.run(
      "INSERT INTO sessions (session_id, directory, paused_at, pause_message_id, continuations, created_at, updated_at) VALUES ('ses_cli_paused', '/work/project', ?, 'msg_user1', 0, ?, ?)",
      Date.now(),
      Date.now(),
      Date.now(),
    );
    const status = await cli(["--db", f.dbPath, "status"]);
    expect(status.stdout).toMatch(
      /Paused sessions \(you stepped in after a continuation; held until the todos progress or a resume\) \(1\):\nSESSION\s+SINCE\s+MESSAGE\s+DIRECTORY\nses_cli_paused\s+\S+ \S+\s+msg_user1\s+\/work\/project/,
    );
    expect((await cli(["--db", f.dbPath, "resume", "ses_cli_paused"])).stdout).toContain("resumed ses_cli_paused");
    const json = JSON.parse((await cli(["--db", f.dbPath, "--json", "status"])).stdout) as { paused: unknown[] };
    expect(json.paused).toEqual([]);
    const row = f.store.raw.all<{ paused_at: number | null; recheck_at: number | null }>(
      "SELECT paused_at, recheck_at FROM sessions WHERE session_id = 'ses_cli_paused'",
    )[0]!;
    expect(row.paused_at).toBeNull();
    // The resume owes the session a look: still owed (recheck_at), or already taken by the engine running on this
    // file (its lease tick may come between the CLI's processes on a loaded machine, and clears recheck_at).
    const looked = f.rows.audit("ses_cli_paused").some((r) => (r.detail as { trigger?: string }).trigger === "recheck");
    expect(row.recheck_at !== null || looked).toBe(true);
  });

  it("status lists a check running, and a stop cancels it", async () => {
    const now = Date.now();
    const scope = { sessionId: "ses_cli_checking", directory: "/work/project", server: null };
    const run = { id: "ver_cli_1", command: "npm test", afterContinuations: 1, ledgerHash: null };
    const owner = { owner: "elsewhere.example/4242/remote", leaseUntil: now + 60_000 };
    expect(await f.port.change(startVerification({ ...scope, ...run, ...owner, startedAt: now - 12_000 }, now))).toBe(
      true,
    );
    expect((await cli(["--db", f.dbPath, "status"])).stdout).toMatch(
      /Checks running \(the `verify` command on a finished list; a message or `stop` cancels one\) \(1\):\nSESSION\s+RUNNING\s+COMMAND\s+LEASE\s+DIRECTORY\nses_cli_checking\s+1[23](\.\d)? s\s+npm test\s+held, [\d.]+ s left\s+\/work\/project/,
    );
    expect((await cli(["--db", f.dbPath, "stop", "ses_cli_checking"])).code).toBe(0);
    expect(JSON.parse((await cli(["--db", f.dbPath, "--json", "status"])).stdout)).toMatchObject({ checking: [] });
    expect(f.rows.trail("ses_cli_checking")).toEqual(["verify_started", "stopped:cli", "cancelled:stopped"]);
  });

  it("history --checks lists each run of the verify command: how it ended, how long it took, its last line", async () => {
    const now = Date.now();
    const scope = { sessionId: "ses_cli_checked", directory: "/work/project", server: null };
    await f.port.change(changeSession(scope, now, { continuations: 1 }));
    const owner = { owner: "elsewhere.example/4242/remote", leaseUntil: now + 60_000, ledgerHash: null };
    const run = (id: string, at: number) => ({
      ...scope,
      ...owner,
      id,
      command: "npm test",
      afterContinuations: 1,
      startedAt: at,
    });
    const ended = (id: string) => ({ id, owner: owner.owner, command: "npm test", ledgerHash: null });
    await f.port.change(startVerification(run("ver_h1", now - 60_000), now - 60_000));
    const failed = {
      passed: false,
      failure: "exit",
      exitCode: 1,
      durationMs: 41_000,
      output: "ok 1\nFAIL 2 tests\n",
    } as const;
    await f.port.change(endVerification(scope, ended("ver_h1"), failed, now - 19_000));
    await f.port.change(changeSession(scope, now, { continuations: 2 }));
    await f.port.change(startVerification(run("ver_h2", now - 10_000), now - 10_000));
    const passed = { passed: true, exitCode: 0, durationMs: 9_000, output: "all green" } as const;
    await f.port.change(endVerification(scope, ended("ver_h2"), passed, now - 1000));
    const { stdout } = await cli(["--db", f.dbPath, "history", "--checks", "--session", "ses_cli_checked"]);
    expect(stdout).toMatch(/TIME\s+SESSION\s+COMMAND\s+RESULT\s+TOOK\s+LAST LINE/);
    expect(stdout).toMatch(/ses_cli_checked\s+npm test\s+failed: exit 1\s+41\.0 s\s+FAIL 2 tests/);
    expect(stdout).toMatch(/ses_cli_checked\s+npm test\s+passed\s+9\.0 s/);
    const json = JSON.parse(
      (await cli(["--db", f.dbPath, "--json", "history", "--checks", "--session", "ses_cli_checked"])).stdout,
    ) as unknown[];
    expect(json).toMatchObject([
      { id: "ver_h1", state: "failed", exit_code: 1, failures: 1 },
      { id: "ver_h2", state: "passed", exit_code: 0 },
    ]);
    expect((await cli(["--db", f.dbPath, "history", "--checks", "--session", "ses_cli_armed"])).stdout).toContain(
      "no run of the verify command recorded",
    );
  });

  it("doctor says plainly a check that could not start, and one that ran out of time", async () => {
    const now = Date.now();
    const scope = { sessionId: "ses_cli_unchecked", directory: "/work/project", server: null };
    await f.port.change(changeSession(scope, now, { continuations: 1 }));
    const owner = { owner: "elsewhere.example/4242/remote", leaseUntil: now + 60_000, ledgerHash: null };
    const base = { ...scope, ...owner, command: "npx vitest run", afterContinuations: 1 };
    const ended = (id: string) => ({ id, owner: owner.owner, command: "npx vitest run", ledgerHash: null });
    await f.port.change(startVerification({ ...base, id: "ver_nr", startedAt: now - 5000 }, now - 5000));
    const notRun = {
      passed: false,
      failure: "not_run",
      exitCode: 127,
      durationMs: 3,
      output: "sh: 1: npx: not found\n",
    };
    await f.port.change(endVerification(scope, ended("ver_nr"), notRun as never, now - 4990));
    const { stdout } = await cli(["--db", f.dbPath, "doctor"]);
    expect(stdout).toMatch(
      /WARN\s+verify\s+"npx vitest run" could not start in ses_cli_unchecked \d+(\.\d)? s ago: sh: 1: npx: not found \(never counted as passed/,
    );
  });

  it("wake ends a session's park now (owing it a look) and unpark drops one; either says when nothing is parked", async () => {
    const parkNow = async (sessionId: string, id: string) => {
      const now = Date.now();
      const scope = { sessionId, directory: "/work/project", server: null };
      const detail = { asked: "CI is running" };
      await f.port.change(park(scope, { id, reason: "agent", wakeAt: now + 3_600_000, detail }, now));
    };
    await parkNow("ses_cli_parked", "park_cli_1");
    // status lists it, with when it wakes and why.
    expect((await cli(["--db", f.dbPath, "status"])).stdout).toMatch(
      /Parked sessions \(waiting, at no cost, until their time; `wake` or `unpark` ends it\) \(1\):\nSESSION\s+WAKES\s+REASON\s+FOR\s+DIRECTORY\nses_cli_parked\s+in (59 min|1 h)[^\n]*?\s+agent\s+CI is running\s+\/work\/project/,
    );
    const woke = await cli(["--db", f.dbPath, "wake", "ses_cli_parked"]);
    expect(woke).toMatchObject({ code: 0 });
    expect(woke.stdout).toContain("woke ses_cli_parked");
    expect((await cli(["--db", f.dbPath, "wake", "ses_cli_parked"])).stdout).toContain("ses_cli_parked is not parked");
    await parkNow("ses_cli_parked", "park_cli_2");
    const json = JSON.parse((await cli(["--db", f.dbPath, "--json", "unpark", "ses_cli_parked"])).stdout) as unknown;
    expect(json).toMatchObject({ session_id: "ses_cli_parked", unparked: true });
    expect((await cli(["--db", f.dbPath, "unpark", "ses_cli_parked"])).stdout).toContain("is not parked");
    expect(JSON.parse((await cli(["--db", f.dbPath, "--json", "status"])).stdout)).toMatchObject({ parked: [] });
    expect(f.rows.trail("ses_cli_parked").filter((t) => /park|woke/.test(t))).toEqual([
      "parked:agent",
      "woke:command",
      "parked:agent",
      "unparked:command",
    ]);
    const unknown = await cli(["--db", f.dbPath, "wake", "ses_cli_never"]);
    expect(unknown.code).toBe(2);
  });

  it("resume lifts a provider's refusal and says what it lifted", async () => {
    f.store.raw.run(
      "INSERT INTO sessions (session_id, directory, last_error_kind, last_error_at, notified_stop, created_at, updated_at) VALUES ('ses_cli_refused', '/work/project', 'permanent', ?, 'provider_error', ?, ?)",
      Date.now(),
      Date.now(),
      Date.now(),
    );
    const resumed = await cli(["--db", f.dbPath, "resume", "ses_cli_refused"]);
    expect(resumed).toMatchObject({ code: 0 });
    expect(resumed.stdout).toContain("resumed ses_cli_refused: lifted the provider's refusal");
    const json = JSON.parse((await cli(["--db", f.dbPath, "--json", "resume", "ses_cli_refused"])).stdout) as unknown;
    expect(json).toMatchObject({ session_id: "ses_cli_refused", stopped: false, changed: false, lifted: [] });
  });

  it("allow grants more budget, lifts a budget stop and says both; with no amount, as much again", async () => {
    f.store.raw.run(
      "INSERT INTO sessions (session_id, directory, continuations, continuation_cost, continuation_tokens, notified_stop, created_at, updated_at) VALUES ('ses_cli_budget', '/work/project', 20, 0.42, 9000, 'budget_exhausted', ?, ?)",
      Date.now(),
      Date.now(),
    );
    const allowed = await cli(["--db", f.dbPath, "allow", "ses_cli_budget", "--continuations", "10"]);
    expect(allowed).toMatchObject({ code: 0 });
    expect(allowed.stdout).toContain(
      "allowed 10 more continuations to ses_cli_budget; lifted the spent budget; a running enforcer looks at it again",
    );
    const again = JSON.parse((await cli(["--db", f.dbPath, "--json", "allow", "ses_cli_budget"])).stdout) as unknown;
    expect(again).toMatchObject({
      session_id: "ses_cli_budget",
      changed: true,
      granted: { continuations: 20, cost: 0.42, tokens: 9000 },
      lifted: [],
      stopped: false,
    });
    const cost = await cli(["--db", f.dbPath, "allow", "ses_cli_budget", "--cost", "0.5", "--tokens", "20000"]);
    expect(cost.stdout).toContain("allowed $0.50 and 20k tokens more to ses_cli_budget; it counts until your next");
    const row = f.store.raw.all<Record<string, number>>(
      "SELECT allowed_continuations, allowed_cost, allowed_tokens FROM sessions WHERE session_id = 'ses_cli_budget'",
    )[0];
    expect(row).toEqual({ allowed_continuations: 30, allowed_cost: expect.closeTo(0.92, 9), allowed_tokens: 29_000 });
    // The running engine may make the look each one owed (the session has no todos): only the CLI's rows matter here.
    const bycli = f.rows.trail("ses_cli_budget").filter((entry) => entry.startsWith("unstopped"));
    expect(bycli).toEqual(["unstopped:cli", "unstopped:cli", "unstopped:cli"]);
  });

  it("allow refuses an amount that is not one (exit 2), names the option, and writes nothing", async () => {
    for (const [option, value] of [
      ["--continuations", "0"],
      ["--continuations", "2.5"],
      ["--tokens", "many"],
      ["--cost", "0"],
      ["--cost", "$5"],
    ]) {
      const refused = await cli(["--db", f.dbPath, "allow", S, option!, value!]);
      expect(refused.code, `${option} ${value}`).toBe(2);
      expect(refused.stderr).toContain(option);
    }
    expect(f.rows.trail(S).filter((r) => r.startsWith("unstopped"))).toEqual([]);
    const typo = await cli(["--db", f.dbPath, "allow", "ses_nobody"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("no session ses_nobody in");
  });

  it("a stop written by the CLI holds in a running engine, before it arms and before it injects", async () => {
    // A countdown far longer than a CLI process takes to start on a loaded machine: the stop lands while it runs.
    const engine = await startEngine({ config: { countdownSeconds: 10, toast: false } });
    try {
      engine.host.addUserMessage("ses_live", "go");
      engine.host.setTodos("ses_live", [["x", "pending"]]);
      // Not seen yet (its first idle comes next): --force says so.
      expect(
        (await cli(["--db", engine.dbPath, "stop", "ses_live", "--force", "--directory", "/work/project"])).code,
      ).toBe(0);
      engine.enforcer.handleEvent(ev.idle("ses_live"));
      await engine.enforcer.settled();
      expect(engine.rows.trail("ses_live")).toEqual(["stopped:cli", "skipped:stopped"]);
      await cli(["--db", engine.dbPath, "resume", "ses_live"]);
      engine.enforcer.handleEvent(ev.idle("ses_live"));
      await engine.enforcer.settled();
      // Armed once. The resume owes the session a look, which a lease tick may make beside this idle's: the later
      // countdown then supersedes the earlier (seen on a loaded machine), and one is armed either way.
      const armedNow = () => engine.rows.countdowns("ses_live").filter((c) => c.state === "armed");
      expect(armedNow()).toHaveLength(1);
      const armed = armedNow()[0]!;
      // Now stopped by the CLI during the countdown: the countdown's end sees it.
      await cli(["--db", engine.dbPath, "stop", "ses_live"]);
      await drained(engine);
      expect(engine.host.prompts).toEqual([]);
      expect(engine.rows.countdowns("ses_live").find((c) => c.id === armed.id)).toMatchObject({
        state: "cancelled",
        end_reason: "stopped",
      });
      expect(armedNow()).toEqual([]);
    } finally {
      await engine.destroy();
    }
  });

  it("doctor reports path, schema, integrity, leases and unsettled continuations", async () => {
    const doctor = await cli(["--db", f.dbPath, "doctor"]);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toContain(`database   ${f.dbPath}`);
    expect(doctor.stdout).toMatch(/OK\s+integrity\s+PRAGMA quick_check: ok/);
    expect(doctor.stdout).toMatch(/OK\s+schema\s+(\d+)\/\1 migrations applied/);
    const json = JSON.parse((await cli(["--db", f.dbPath, "--json", "doctor"])).stdout) as {
      schema: { pending: number };
      integrity: { ok: boolean };
    };
    expect(json).toMatchObject({ schema: { pending: 0, newer: false }, integrity: { ok: true } });
  });

  it("prune deletes settled history older than the duration, in batches, and never an armed countdown", async () => {
    const folder = tempFolder();
    const engine = await startEngine({ folder, config: { countdownSeconds: 3600, toast: false } });
    engine.host.setTodos("ses_keep", [["x", "pending"]]);
    engine.enforcer.handleEvent(ev.idle("ses_keep"));
    await engine.enforcer.settled();
    const old = Date.now() - 40 * 86_400_000;
    engine.store.raw.exec("BEGIN");
    for (let i = 0; i < 2500; i++)
      engine.store.raw.run(
        "INSERT INTO audit_events (at, session_id, event, reason, detail) VALUES (?, 'ses_old', 'skipped', 'no_todos', '{}')",
        old + i,
      );
    engine.store.raw.exec("COMMIT");
    await engine.close();
    const dry = JSON.parse(
      (await cli(["--db", engine.dbPath, "--json", "prune", "--older-than", "30d", "--dry-run"])).stdout,
    ) as { audit_events: number };
    expect(dry.audit_events).toBe(2500);
    const real = await cli(["--db", engine.dbPath, "--json", "prune", "--older-than", "30d", "--batch", "1000"]);
    // Three batches of audit rows, and one that finds nothing in each of the other seven tables.
    expect(JSON.parse(real.stdout)).toMatchObject({
      ...{ audit_events: 2500, countdowns: 0, parks: 0, bills: 0, notices: 0, verifications: 0 },
      batches: 10,
    });
    const status = JSON.parse((await cli(["--db", engine.dbPath, "--json", "status"])).stdout) as { armed: unknown[] };
    expect(status.armed).toHaveLength(1);
    const human = await cli(["--db", engine.dbPath, "prune", "--older-than", "1h"]);
    expect(human.stdout).toMatch(
      /^deleted history before .*: 0 audit rows, 0 closed countdowns, 0 settled injections, 0 deleted sessions, 0 bills, 0 settled notices, 0 ended checks \(\d+ batches, median \d+\.\d ms, longest \d+\.\d ms\)/,
    );
    await engine.destroy();
  });

  it("migrate creates and migrates a new file, then has nothing to do", async () => {
    const db = join(tempFolder(), "new", "state.db");
    const first = await cli(["--db", db, "migrate"]);
    expect(first).toMatchObject({ code: 0 });
    expect(first.stdout).toMatch(/applied \d+ migration\(s\)/);
    expect((await cli(["--db", db, "migrate"])).stdout).toMatch(/is up to date \((\d+)\/\1 migrations\)/);
  });

  it("TODO_CONTINUATION_DB is used when --db is not given", async () => {
    const result = await cli(["--json", "history"], { TODO_CONTINUATION_DB: f.dbPath });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toHaveLength(1);
  });

  it.each([
    [["history", "--limit", "0"]],
    [["history", "--limit", "ten"]],
    [["audit", "--since", "yesterday"]],
    [["audit", "--event", "exploded"]],
    [["prune"]],
    [["prune", "--older-than", "soon"]],
    [["stop"]],
    [["serve"]],
    [["serve", "--url", "not a url"]],
    [["serve", "--url", "http://127.0.0.1:4096", "--silence-timeout", "5"]],
    [["serve", "--url", "http://127.0.0.1:4096", "--silence-timeout", "half a minute"]],
    [["frobnicate"]],
    [["--no-such-option"]],
  ])("usage error %j exits 2 with a message", async (args) => {
    const result = await cli(["--db", f.dbPath, ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/error/i);
  });

  it.each([
    [["audit", "--limit", "99999999999999999999"], /--limit is out of range/],
    [["history", "--limit", "1e3"], /--limit takes a whole number/],
    [["prune", "--older-than", "30d", "--batch", "99999999999999999999"], /--batch is out of range/],
    [["audit", "--since", "99999999999999999999d"], /--since is out of range/],
    [["prune", "--older-than", "99999999999999999999w", "--dry-run"], /--older-than is out of range/],
    [["serve", "--url", "http://127.0.0.1:1", "--options", "[1]"], /--options must be a JSON object/],
    [["serve", "--url", "http://127.0.0.1:1", "--options", "null"], /--options must be a JSON object/],
    [["serve", "--url", "http://127.0.0.1:1", "--options", '"x"'], /--options must be a JSON object/],
    [["servers", "list"], /servers are followed by a fleet that shares a PostgreSQL database: pass --db postgres:/],
    [["servers", "remove", "pod-b"], /servers are followed by a fleet that shares a PostgreSQL database/],
  ])("usage error %j exits 2 saying what is wrong", async (args, message) => {
    const result = await cli(["--db", f.dbPath, ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it("serve reads the config files of the directory it follows and refuses a typo in them", async () => {
    const project = tempFolder();
    mkdirSync(join(project, ".opencode"));
    const file = join(project, ".opencode", "todo-continuation.json");
    writeFileSync(file, JSON.stringify({ countdownSecs: 3 }));
    const args = ["--db", f.dbPath, "serve", "--url", "http://127.0.0.1:1", "--directory", project];
    const refused = await cli([...args, "--options", '{"countdownSeconds": 3}']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `in ${file}: countdownSecs = 3; allowed: a known option (did you mean countdownSeconds?)`,
    );
  });

  it("an empty --db is a usage error, not the default file", async () => {
    for (const db of ["", "  "]) {
      const result = await cli(["--db", db, "status"], { TODO_CONTINUATION_DB: f.dbPath });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/--db .*empty/);
    }
  });

  it("a URL of another kind of database is refused, creates nothing and never shows its password", async () => {
    const cwd = tempFolder();
    for (const args of [
      ["--db", "mysql://u:s3cret@host/x", "migrate"],
      ["--db", "sqlite:///tmp/x.db", "status"],
      ["--db", "postgres://u:s3cret@host:port/x", "status"],
      ["serve", "--url", "http://127.0.0.1:1", "--db", "mysql://u:s3cret@host/x"],
    ]) {
      const result = await cli(args, {}, cwd);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr, args.join(" ")).toMatch(/--db: .*(postgres:\/\/ URL|not a valid URL)/);
      expect(`${result.stdout}${result.stderr}`).not.toContain("s3cret");
    }
    const env = await cli(["migrate"], { TODO_CONTINUATION_DB: "mysql://u:s3cret@host/x" }, cwd);
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/TODO_CONTINUATION_DB: mysql:\/\/u:\*\*\*@host\/x is not a database/);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it("~ in --db is the home folder, and a relative path is the current directory's", async () => {
    const home = tempFolder();
    const cwd = tempFolder();
    const tilde = await cli(["--db", "~/todo.db", "migrate"], { HOME: home }, cwd);
    expect(tilde.code).toBe(0);
    expect(existsSync(join(home, "todo.db"))).toBe(true);
    const relative = await cli(["--db", "state/todo.db", "migrate"], { HOME: home }, cwd);
    expect(relative.code).toBe(0);
    expect(relative.stdout).toContain(join(cwd, "state", "todo.db"));
    expect(readdirSync(cwd)).toEqual(["state"]);
  });

  it("cost totals what continuations cost by session, day or model, their share, the todos and files they bought", async () => {
    const db = join(tempFolder("tc-cli-cost-"), "bills.db");
    const store = await openStore(db, { kind: "cli" });
    const now = Date.now();
    const bill = (
      id: string,
      sessionId: string,
      modelId: string,
      cost: number,
      tokens: number,
      todosClosed: number,
      work: { filesChanged: number; sessionCost: number },
    ) =>
      recordBill(
        { sessionId, directory: "/p" },
        {
          injectionId: id,
          sessionId,
          directory: "/p",
          messageId: `msg_${id}`,
          continuedAt: now,
          recordedAt: now,
          outcome: "completed",
          modelId,
          tokens,
          cost,
          todosClosed,
          ...work,
        },
        now,
      );
    await store.change(bill("i1", "ses_a", "model-1", 0.5, 1000, 1, { filesChanged: 2, sessionCost: 1 }));
    await store.change(bill("i2", "ses_a", "model-2", 0.25, 3000, 0, { filesChanged: 0, sessionCost: 3 }));
    await store.change(bill("i3", "ses_b", "model-1", 1, 500, 3, { filesChanged: 4, sessionCost: 4 }));
    await store.close();
    const bySession = JSON.parse((await cli(["--db", db, "--json", "cost"])).stdout);
    // The share is of the session's whole spend when its last continuation was billed.
    expect(bySession).toEqual([
      {
        key: "ses_b",
        continuations: 1,
        tokens: 500,
        cost: 1,
        todos_closed: 3,
        files_changed: 4,
        session_cost: 4,
        share: 0.25,
      },
      {
        key: "ses_a",
        continuations: 2,
        tokens: 4000,
        cost: 0.75,
        todos_closed: 1,
        files_changed: 2,
        session_cost: 3,
        share: 0.25,
      },
    ]);
    const table = (await cli(["--db", db, "cost"])).stdout.trim().split("\n");
    expect(table[0]).toMatch(
      /^SESSION\s+CONTINUATIONS\s+TOKENS\s+COST\s+SHARE\s+TODOS CLOSED\s+COST\/TODO\s+FILES CHANGED$/,
    );
    expect(table.at(-1)).toMatch(/^total\s+3\s+4500\s+1\.7500\s+25%\s+4\s+0\.4375\s+6$/);
    const byModel = await cli(["--db", db, "cost", "--by", "model", "--since", "1d"]);
    expect(byModel.code).toBe(0);
    const lines = byModel.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^MODEL\s+CONTINUATIONS\s+TOKENS\s+COST\s+TODOS CLOSED\s+COST\/TODO\s+FILES CHANGED$/);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^model-1\s+2\s+1500\s+1\.5000\s+4\s+0\.3750\s+6$/),
      expect.stringMatching(/^model-2\s+1\s+3000\s+0\.2500\s+0\s+0$/),
      expect.stringMatching(/^total\s+3\s+4500\s+1\.7500\s+4\s+0\.4375\s+6$/),
    ]);
    const byDay = JSON.parse((await cli(["--db", db, "--json", "cost", "--by", "day", "--session", "ses_a"])).stdout);
    expect(byDay).toEqual([
      {
        key: new Date(now).toISOString().slice(0, 10),
        continuations: 2,
        tokens: 4000,
        cost: 0.75,
        todos_closed: 1,
        files_changed: 2,
      },
    ]);
    expect((await cli(["--db", db, "cost", "--by", "week"])).code).toBe(2);
  });

  it("doctor names the models billed without a price: the cost budgets cannot apply to them", async () => {
    const db = join(tempFolder("tc-cli-cost-"), "bills.db");
    const store = await openStore(db, { kind: "cli" });
    const now = Date.now();
    const bill = (id: string, providerId: string, modelId: string, cost: number) =>
      recordBill(
        { sessionId: "ses_a", directory: "/p" },
        {
          injectionId: id,
          sessionId: "ses_a",
          directory: "/p",
          messageId: `msg_${id}`,
          continuedAt: now,
          recordedAt: now,
          outcome: "completed",
          providerId,
          modelId,
          tokens: 700,
          cost,
        },
        now,
      );
    await store.change(bill("i1", "cloud", "priced-1", 0.01));
    await store.change(bill("i2", "ollama", "llama-local", 0));
    await store.close();
    const doctor = await cli(["--db", db, "doctor"]);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toMatch(
      /WARN\s+prices\s+no price for ollama\/llama-local: maxContinuationCost and dailyContinuationCost cannot apply/,
    );
    expect(doctor.stdout).not.toContain("cloud/priced-1:");
  });

  it("a missing database is a clear failure (exit 1) and is not created by reading commands", async () => {
    const db = join(tempFolder(), "absent.db");
    for (const command of ["history", "audit", "status", "doctor"]) {
      const result = await cli(["--db", db, command]);
      expect(result.code, command).toBe(1);
      // doctor reports it among its findings, after what the plugin and the config files say.
      expect(command === "doctor" ? result.stdout : result.stderr, command).toContain(`no database at ${db}`);
    }
    expect(existsSync(db)).toBe(false);
  });

  it("a corrupt database is a clear failure (exit 1)", async () => {
    const db = join(tempFolder(), "corrupt.db");
    writeFileSync(db, Buffer.alloc(64 * 1024, 0x5a));
    for (const command of ["history", "status", "doctor", "migrate"]) {
      const result = await cli(["--db", db, command]);
      expect(result.code, command).toBe(1);
      expect(result.stderr, command).toMatch(/not a valid SQLite database|damaged/);
    }
  });
});
