// Kill an engine process with SIGKILL at random moments of the lifecycle, many times, restart it on the same file,
// and check that nothing armed is lost and no continuation reaches the host twice.
import Database from "better-sqlite3";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempFolder } from "../support/engine-fixture.js";
import { startProcess } from "./processes.js";
import { ScriptedServer } from "./scripted-server.js";
import { checkInvariants } from "./invariants.js";

const ITERATIONS = Number(process.env.CRASH_ITERATIONS ?? 200);

describe("crash points", () => {
  const server = new ScriptedServer();
  let url: string;
  const folder = tempFolder("tc-crash-");
  const db = join(folder, "state.db");

  beforeAll(async () => {
    url = await server.start();
  });
  afterAll(async () => {
    await server.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  it(`survives ${ITERATIONS} SIGKILLs at random points`, { timeout: 600_000 }, async () => {
    // A lease far longer than a restart: adopting the dead process's countdowns must rely on its pid being gone.
    const env = { DB: db, HOST_URL: url, SESSIONS: "6", ROUNDS: "0", PAUSE_BEFORE_PROMPT_MS: "40", LEASE_MS: "15000" };
    const found = { armedAtRestart: 0, pendingAtRestart: 0, pendingDelivered: 0 };
    for (let i = 0; i < ITERATIONS; i++) {
      const running = startProcess("node", "engine-process.ts", env);
      await running.waitFor("ready");
      await new Promise((r) => setTimeout(r, Math.random() * 700));
      running.child.kill("SIGKILL");
      await running.exited;
      const file = new Database(db, { readonly: true });
      found.armedAtRestart += (
        file.prepare("SELECT count(*) AS n FROM countdowns WHERE state = 'armed'").get() as { n: number }
      ).n;
      const pending = file.prepare("SELECT id FROM injections WHERE status = 'pending'").all() as Array<{ id: string }>;
      found.pendingAtRestart += pending.length;
      found.pendingDelivered += pending.filter((p) => server.prompts.some((d) => d.injectionId === p.id)).length;
      file.close();
    }
    const last = startProcess("node", "engine-process.ts", { ...env, ROUNDS: "3" });
    await last.waitFor("done", 60_000);
    await last.exited;

    const report = checkInvariants(db, server.prompts);
    console.log(
      `crash test: ${ITERATIONS} SIGKILLs; at the restarts: ${found.armedAtRestart} armed countdowns, ` +
        `${found.pendingAtRestart} pending injections (${found.pendingDelivered} of them already delivered); ` +
        `in all: ${JSON.stringify(report.counts)}`,
    );
    expect(report.violations).toEqual([]);
    expect(report.counts.fired).toBeGreaterThan(ITERATIONS);
    // Every previous owner was dead, so each restart adopted at once by its pid, never by waiting out a lease.
    expect(report.counts.resumed_restart).toBeGreaterThan(0);
    expect(report.counts.resumed_lease_expired ?? 0).toBe(0);
    // The kills must actually have landed in the interesting windows, or the test proves little.
    expect(found.armedAtRestart).toBeGreaterThan(0);
    expect(found.pendingAtRestart).toBeGreaterThan(0);
  });
});
