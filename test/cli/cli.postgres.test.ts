// The built `todo-continuation` binary against a real PostgreSQL server: every command takes the URL in --db, and a
// server that is not there is one clear line and exit 1.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { park } from "../../src/store/changes/park.js";
import { ROOT } from "../crash/processes.js";
import { cli, requireBuiltCli } from "../support/cli.js";
import { ev } from "../support/events.js";
import { drained, startEngine, type EngineFixture } from "../support/engine-fixture.js";
import { freshDatabase } from "../support/pg-database.js";
import { tempFolder } from "../support/temp-folders.js";
import { writeOutbox } from "./notice-outbox.js";

let f: EngineFixture;
const S = "ses_pg_main";

beforeAll(async () => {
  requireBuiltCli();
  f = await startEngine({ backend: "postgres", config: { countdownSeconds: 0.05, toast: false } });
  f.host.addUserMessage(S, "go");
  f.host.setTodos(S, [
    ["a", "completed"],
    ["b", "pending"],
  ]);
  f.enforcer.handleEvent(ev.idle(S));
  await drained(f);
  f.host.setTodos("ses_pg_done", [["a", "completed"]]);
  f.enforcer.handleEvent(ev.idle("ses_pg_done"));
  await f.enforcer.settled();
  await f.close();
  // One countdown left armed (long), owned by this live test process's engine.
  f = await startEngine({ backend: "postgres", folder: f.folder, host: f.host, config: { countdownSeconds: 3600 } });
  f.host.setTodos("ses_pg_armed", [["x", "pending"]]);
  f.enforcer.handleEvent(ev.idle("ses_pg_armed"));
  await f.enforcer.settled();
}, 60_000);

afterAll(async () => {
  await f?.destroy();
});

describe("todo-continuation CLI on PostgreSQL", () => {
  it("history and audit read the same rows as on SQLite", async () => {
    const history = await cli(["--db", f.dbPath, "history"]);
    expect(history.code).toBe(0);
    expect(history.stdout.trim().split("\n")[1]).toMatch(
      new RegExp(
        `^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\s+${S}\\s+sent\\s+build\\s+scripted/model-1\\s+1/2\\s+(on time|late by [\\d.]+ s)\\s+1$`,
      ),
    );
    const rows = JSON.parse((await cli(["--db", f.dbPath, "--json", "history", "--session", S])).stdout);
    expect(rows).toMatchObject([{ session_id: S, status: "sent", todos_open: 1, todos_total: 2, attempt: 0 }]);
    expect(typeof rows[0].created_at).toBe("number");
    const trail = JSON.parse((await cli(["--db", f.dbPath, "--json", "audit", "--session", S])).stdout);
    expect(trail.map((r: { event: string }) => r.event)).toEqual(["armed", "fired", "injected"]);
    const skips = await cli(["--db", f.dbPath, "audit", "--reason", "todos_complete"]);
    expect(skips.stdout).toContain("ses_pg_done");
  });

  it("status shows the armed countdown held by a live replica; stop and resume change it", async () => {
    const status = await cli(["--db", f.dbPath, "status"]);
    expect(status.code).toBe(0);
    // ses_pg_main's continuation never saw its turn start (this host starts none), so the second engine owes it a
    // look too, which may arm a countdown of its own at any time (on a loaded machine, during this test): only
    // ses_pg_armed's rows are this test's.
    expect(status.stdout).toMatch(
      /Armed countdowns \([12]\):\n.*\n(?:.*\n)?ses_pg_armed\s+in 59 min \d+ s\s+1\/1\s+\S+\s+held, /,
    );
    expect((await cli(["--db", f.dbPath, "stop", "ses_pg_armed"])).stdout).toContain(
      "stopped ses_pg_armed (its armed countdown was cancelled)",
    );
    expect((await cli(["--db", f.dbPath, "stop", "ses_pg_armed"])).stdout).toContain("was already stopped");
    const json = JSON.parse((await cli(["--db", f.dbPath, "--json", "status"])).stdout);
    expect(json.armed.filter((row: { session_id: string }) => row.session_id === "ses_pg_armed")).toEqual([]);
    expect(json.stopped).toMatchObject([{ session_id: "ses_pg_armed", stop_source: "cli" }]);
    expect((await cli(["--db", f.dbPath, "resume", "ses_pg_armed"])).stdout).toContain("resumed ses_pg_armed");
    expect((await cli(["--db", f.dbPath, "allow", "ses_pg_armed", "--continuations", "3"])).stdout).toContain(
      "allowed 3 more continuations to ses_pg_armed",
    );
    const allowed = JSON.parse(
      (await cli(["--db", f.dbPath, "--json", "allow", "ses_pg_armed", "--cost", "0.25"])).stdout,
    );
    expect(allowed).toMatchObject({ changed: true, granted: { continuations: 0, cost: 0.25, tokens: 0 }, lifted: [] });
  });

  it("status lists a parked session; wake and unpark end parks as on SQLite", async () => {
    const scope = { sessionId: "ses_pg_parked", directory: "/work/project", server: null };
    const parkNow = (id: string) =>
      f.port.change(
        park(scope, { id, reason: "agent", wakeAt: Date.now() + 7_200_000, detail: { asked: "CI" } }, Date.now()),
      );
    await parkNow("park_pg_1");
    const json = JSON.parse((await cli(["--db", f.dbPath, "--json", "status"])).stdout) as { parked: unknown[] };
    expect(json.parked).toMatchObject([
      { session_id: "ses_pg_parked", reason: "agent", detail: expect.stringContaining("CI") },
    ]);
    expect((await cli(["--db", f.dbPath, "wake", "ses_pg_parked"])).stdout).toContain("woke ses_pg_parked");
    await parkNow("park_pg_2");
    expect((await cli(["--db", f.dbPath, "unpark", "ses_pg_parked"])).stdout).toContain("unparked ses_pg_parked");
    expect((await cli(["--db", f.dbPath, "unpark", "ses_pg_parked"])).stdout).toContain("is not parked");
    expect(f.rows.trail("ses_pg_parked").filter((t) => /park|woke/.test(t))).toEqual([
      "parked:agent",
      "woke:command",
      "parked:agent",
      "unparked:command",
    ]);
  });

  it("doctor shows the server's version, the replicas with their heartbeat age, and the schema", async () => {
    const doctor = await cli(["--db", f.dbPath, "doctor"]);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toMatch(/^server {5}PostgreSQL 1\d\.\d+/m);
    expect(doctor.stdout).toMatch(/OK\s+schema\s+(\d+)\/\1 migrations applied/);
    expect(doctor.stdout).toMatch(/OK\s+replicas\s+1 alive/);
    expect(doctor.stdout).toMatch(
      /Replicas \(heartbeat by the database's clock\):\nREPLICA\s+KIND\s+HEARTBEAT\s+LEASE\s+COUNTDOWNS\n\S+\s+plugin\s+\d/,
    );
    const json = JSON.parse((await cli(["--db", f.dbPath, "--json", "doctor"])).stdout);
    expect(json.driver).toBe("pg");
    expect(json.replicas).toHaveLength(1);
    expect(json.replicas[0]).toMatchObject({ alive: true, kind: "plugin" });
    expect(json.schema).toMatchObject({ pending: 0, newer: false });
  });

  it("notices and doctor's notifications read the outbox as on SQLite: numbers as numbers, each channel's last error", async () => {
    const outbox = await writeOutbox(f.port);
    const table = await cli(["--db", f.dbPath, "notices"]);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(6);
    expect(lines[2]).toMatch(
      /\s+question\s+hook\s+pending\s+1\s+next in [12] min \d+ s\s+error: 503 from hooks\.example\.com$/,
    );
    const rows = JSON.parse((await cli(["--db", f.dbPath, "--json", "notices", "--state", "sent"])).stdout);
    expect(rows.map((r: { id: string }) => r.id)).toEqual(["ntc_budget:old", "ntc_budget:hook"]);
    expect(rows[1]).toMatchObject({ attempts: 1, sent_at: outbox.sentAt, body: { id: "ntc_budget", kind: "budget" } });
    expect(typeof rows[1].created_at).toBe("number");
    const doctor = JSON.parse((await cli(["--db", f.dbPath, "--json", "doctor", "--directory", tempFolder()])).stdout);
    expect(doctor.notifications.channels).toEqual([
      expect.objectContaining({
        channel: "hook",
        pending: 1,
        last_sent_at: outbox.sentAt,
        last_error_at: outbox.hookFailedAt,
      }),
      expect.objectContaining({ channel: "old", sent: 1, pending: 1, last_error: null }),
      expect.objectContaining({ channel: "phone", failed: 1, last_error: "404 from ntfy.example.com" }),
    ]);
  });

  it("migrate creates the schema on an empty database once; prune counts what would go", async () => {
    const url = await freshDatabase("cli");
    const first = await cli(["--db", url, "migrate"]);
    expect(first).toMatchObject({ code: 0 });
    const shipped = readdirSync(join(ROOT, "migrations-pg")).filter((f) => f.endsWith(".sql")).length;
    expect(first.stdout).toMatch(
      new RegExp(`^applied ${shipped} migration\\(s\\) to postgres://.*; schema is at ${shipped}/${shipped}$`, "m"),
    );
    expect((await cli(["--db", url, "migrate"])).stdout).toContain(`is up to date (${shipped}/${shipped} migrations)`);
    const prune = await cli(["--db", f.dbPath, "--json", "prune", "--older-than", "1d", "--dry-run"]);
    expect(JSON.parse(prune.stdout)).toMatchObject({ dryRun: true, auditEvents: 0 });
  });

  it("servers add, list and remove the fleet's OpenCode servers; no password is ever stored", async () => {
    const url = await freshDatabase("cli");
    const add = (...args: string[]) => cli(["--db", url, "servers", "add", ...args]);
    const added = await add(
      "--url",
      "http://10.0.0.7:4096",
      "--directory",
      "/workspace",
      "--password-env",
      "POD_A_PASSWORD",
    );
    expect(added).toMatchObject({ code: 0 });
    expect(added.stdout).toContain("added 10.0.0.7:4096: http://10.0.0.7:4096 (/workspace)");
    expect((await add("--url", "http://10.0.0.8:4096", "--directory", "/w", "--name", "pod-b")).code).toBe(0);
    const again = await add("--url", "http://x:1", "--directory", "/w", "--name", "pod-b");
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('a server named "pod-b" is already listed');
    const secret = await add("--url", "http://u:hunter2@10.0.0.9:4096", "--directory", "/w");
    expect(secret.code).toBe(2);
    expect(secret.stderr).toContain("passwords are never stored");
    const list = await cli(["--db", url, "servers", "list"]);
    expect(list.stdout).toMatch(/^NAME\s+URL\s+DIRECTORY\s+FOLLOWED BY\s+STREAM\s+PASSWORD\s+ADDED$/m);
    expect(list.stdout).toMatch(
      /^10\.0\.0\.7:4096\s+http:\/\/10\.0\.0\.7:4096\s+\/workspace\s+nobody\s+never\s+\$POD_A_PASSWORD/m,
    );
    const json = JSON.parse((await cli(["--db", url, "--json", "servers", "list"])).stdout);
    expect(json.map((s: { name: string }) => s.name)).toEqual(["10.0.0.7:4096", "pod-b"]);
    expect(JSON.stringify(json)).not.toContain("hunter2");
    const doctor = await cli(["--db", url, "doctor"]);
    expect(doctor.stdout).toMatch(/WARN\s+servers\s+2 of 2 followed by no live replica \(10\.0\.0\.7:4096, pod-b\)/);
    expect(doctor.stdout).toMatch(
      /Server leases \(the fleet's OpenCode servers\):\nSERVER\s+URL\s+FOLLOWED BY\s+SINCE\s+STREAM\n/,
    );
    expect((await cli(["--db", url, "servers", "remove", "pod-b"])).stdout).toContain("removed pod-b");
    const gone = await cli(["--db", url, "servers", "remove", "pod-b"]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('no server named "pod-b"');
    const onSqlite = await cli(["--db", "/tmp/tc-no-such-folder/state.db", "servers", "list"]);
    expect(onSqlite.code).toBe(2);
    expect(onSqlite.stderr).toContain("servers are followed by a fleet that shares a PostgreSQL database");
    const serveNoUrl = await cli(["--db", "/tmp/tc-no-such-folder/state.db", "serve"]);
    expect(serveNoUrl.code).toBe(2);
    expect(serveNoUrl.stderr).toContain("serve needs --url <OpenCode server>, or a postgres:// database");
  });

  it("a server that is not there, or refuses the user, is one clear line and exit 1; the password never shows", async () => {
    const down = await cli(["--db", "postgres://someone:s3cret@127.0.0.1:1/nothing", "status"]);
    expect(down.code).toBe(1);
    expect(down.stderr.trim().split("\n")).toHaveLength(1);
    expect(down.stderr).toMatch(
      /cannot open the todo-continuation database postgres:\/\/someone:\*\*\*@127\.0\.0\.1:1\/nothing/,
    );
    expect(down.stderr).not.toContain("s3cret");
    const missing = await cli(["--db", f.dbPath.replace(/\/[^/]+$/, "/no_such_db"), "history"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/the database does not exist/);
  });
});
