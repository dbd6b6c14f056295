// doctor's word on the processes sharing the database: one of this host whose pid is gone ended — OpenCode stopped
// with SIGTERM exits without stopping its plugins, so its row stays until the next OpenCode here removes it — and is
// no warning; one still running whose heartbeat stopped is.
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, requireBuiltCli } from "../support/cli.js";
import { startEngine, type EngineFixture } from "../support/engine-fixture.js";

let f: EngineFixture;

beforeAll(async () => {
  requireBuiltCli();
  f = await startEngine({ config: { toast: false } });
}, 30_000);

afterAll(async () => {
  await f.destroy();
});

function replicaRow(pid: number, heartbeatAt: number): void {
  f.db.run(
    "INSERT INTO replicas (id, kind, host, pid, started_at, heartbeat_at, lease_ms) VALUES (?, 'plugin', ?, ?, ?, ?, 15000)",
    `${hostname()}/${pid}/0dd0beef`,
    hostname(),
    pid,
    heartbeatAt - 60_000,
    heartbeatAt,
  );
}

describe("doctor on the replicas of a SQLite file", () => {
  it("a process of this host that is gone ended, fresh heartbeat or not: no warning, and when its row goes", async () => {
    const gone = spawnSync(process.execPath, ["-e", ""]).pid!;
    replicaRow(gone, Date.now());
    const doctor = await cli(["--db", f.dbPath, "doctor"]);
    expect(doctor.stdout).not.toMatch(/WARN\s+replicas/);
    expect(doctor.stdout).toMatch(/OK\s+replicas\s+1 alive/);
    expect(doctor.stdout).toMatch(
      new RegExp(
        `OK\\s+replicas\\s+1 ended \\(pid ${gone}: gone from this host.*the next OpenCode here removes their rows`,
      ),
    );
  });

  it("a process still running whose heartbeat stopped is a warning", async () => {
    // This test's own process: running, but its row's heartbeat is a minute old.
    replicaRow(process.pid, Date.now() - 60_000);
    const doctor = await cli(["--db", f.dbPath, "doctor"]);
    expect(doctor.stdout).toMatch(/WARN\s+replicas\s+1 of 3 without a fresh heartbeat/);
  });
});
