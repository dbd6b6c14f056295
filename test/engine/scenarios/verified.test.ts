// A finished list checked by the `verify` command on a real engine and database, with real commands in a real folder
// (the session's): a model that closes every todo without the work is continued with the check's output until the
// check passes, stopped when it fails the same way twice or too often, and a person's message, a stop, a restart or a
// hanging command each end a check as a user would expect. How a run is written is the store's
// (test/store/changes/verify.cases.ts); how the guard chain weighs one, the core's (test/core/decide.test.ts).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/resolve.js";
import { startEngine, tempFolder, type EngineFixture } from "../../support/engine-fixture.js";
import { ev } from "../../support/events.js";
import { advance, settle as settleEngine, useFakeTime } from "../../support/fake-time.js";
import { waitFor } from "../../support/wait-for.js";

const S = "ses_checked";
let f: EngineFixture;
let project: string;
useFakeTime(() => f);

const settle = () => settleEngine(f);
const trail = () => f.rows.trail(S);

async function boot(verify: Config["verify"], config: Partial<Config> = {}, folder?: string): Promise<void> {
  project ??= tempFolder("tc-verified-");
  f = await startEngine({
    folder,
    host: folder ? f.host : undefined,
    directory: project,
    config: { countdownSeconds: 1, verify, ...config },
  });
  if (!folder) f.host.addUserMessage(S, "build the thing", { agent: "build", providerId: "scripted", modelId: "m" });
}

async function idle(): Promise<void> {
  f.enforcer.handleEvent(ev.idle(S));
  await advance(5);
  await settle();
}

/** One continuation out on an open list, then every todo closed by "the model": the check's moment. */
async function continuedThenClosed(): Promise<void> {
  f.host.setTodos(S, [["write the parser", "pending"]]);
  await idle();
  await advance(1100);
  await settle();
  expect(f.host.prompts).toHaveLength(1);
  f.host.setTodos(S, [["write the parser", "completed"]]);
}

/** An idle on the finished list, and its check (one that touches `started` first) running. */
async function idleUntilTheCheckStarted(): Promise<void> {
  f.enforcer.handleEvent(ev.idle(S));
  await waitFor("the check to start", async () => {
    await advance(0);
    return existsSync(join(project, "started"));
  });
}

/** The countdown the failed check asked for, fired: its continuation out. */
async function fireCountdown(): Promise<void> {
  await advance(1100);
  await settle();
}

const runs = () => f.rows.verifications(S);

describe("a finished list checked by the verify command", () => {
  it("is continued with the check's output while it fails, and done once it passes, saying it was checked", async () => {
    project = tempFolder("tc-verified-");
    await boot({
      command: "test -f done.txt || { echo 'done.txt is missing'; exit 1; }",
      timeoutSeconds: 60,
      maxRuns: 5,
    });
    await continuedThenClosed();
    await idle();
    expect(trail().slice(-4)).toEqual(["injected", "verify_started", "verify_failed:exit", "armed"]);
    expect(f.host.toasts.map((t) => t.message)).toContain(
      "Checking the work: test -f done.txt || { echo 'done.txt is missing'; exit 1; }",
    );
    expect(f.host.toasts.at(-1)?.message).toBe("Resuming in 1s… (the check failed)");
    await fireCountdown();
    expect(f.host.prompts).toHaveLength(2);
    const prompt = f.host.prompts[1]!.text;
    expect(prompt).toContain("the check of the work failed");
    expect(prompt).toContain("    | done.txt is missing");
    // The model does the work this time.
    writeFileSync(join(project, "done.txt"), "");
    await idle();
    expect(trail().slice(-3)).toEqual(["verify_started", "verified", "skipped:todos_complete"]);
    const done = f.rows.audit(S).at(-1)!;
    expect(done.detail).toMatchObject({ verified: { command: expect.stringContaining("test -f done.txt") } });
    expect(runs().map((r) => r.state)).toEqual(["failed", "passed"]);
    expect(f.host.prompts).toHaveLength(2);
    // The done toast says what checked it.
    expect(f.host.toasts.at(-1)?.message).toMatch(/^Done, checked: test -f done\.txt .* passed in \d+ s\.$/);
  });

  it("stops, saying so, when the check fails the same way twice with no file changed", async () => {
    project = tempFolder("tc-verified-");
    await boot({ command: "echo 'FAIL parser.test.ts'; exit 1", timeoutSeconds: 60, maxRuns: 5 });
    await continuedThenClosed();
    await idle();
    await fireCountdown();
    await idle();
    expect(trail().slice(-3)).toEqual(["verify_started", "verify_failed:exit", "skipped:verify_failed"]);
    expect(f.rows.audit(S).at(-1)!.detail).toMatchObject({
      repeated: true,
      failures: 2,
      command: "echo 'FAIL parser.test.ts'; exit 1",
      exitCode: 1,
      output: "FAIL parser.test.ts\n",
    });
    // `repeated` is 0/1 on SQLite and a boolean on PostgreSQL.
    expect(runs().map((r) => [r.state, r.failures, Boolean(r.repeated)])).toEqual([
      ["failed", 1, false],
      ["failed", 2, true],
    ]);
    expect(f.host.prompts).toHaveLength(2);
    expect(f.host.toasts.at(-1)?.message).toContain("the check failed the same way twice");
  });

  it("stops after maxRuns failures that differ", async () => {
    project = tempFolder("tc-verified-");
    // Each run prints something new (a counter in the folder): never the same failure twice.
    await boot({ command: "echo x >> runs.txt; wc -l < runs.txt; exit 2", timeoutSeconds: 60, maxRuns: 2 });
    await continuedThenClosed();
    await idle();
    await fireCountdown();
    await idle();
    expect(trail().at(-1)).toBe("skipped:verify_failed");
    expect(f.rows.audit(S).at(-1)!.detail).toMatchObject({ failures: 2, limit: 2, exitCode: 2 });
    expect(f.rows.audit(S).at(-1)!.detail).not.toHaveProperty("repeated");
  });

  it("says plainly when the command cannot start, and never counts it as passed", async () => {
    project = tempFolder("tc-verified-");
    await boot({ command: "no-such-command-tc", timeoutSeconds: 60, maxRuns: 1 });
    await continuedThenClosed();
    await idle();
    const failed = f.rows.audit(S).find((r) => r.event === "verify_failed")!;
    expect(failed.reason).toBe("not_run");
    expect(failed.detail).toMatchObject({ exitCode: 127, output: expect.stringContaining("not found") });
    const said = f.host.toasts.map((t) => t.message);
    expect(said).toContainEqual(
      expect.stringMatching(/^The check "no-such-command-tc" could not start: .*not found\.$/),
    );
    expect(said.at(-1)).toMatch(/^Stopped: the check failed 1 time\./);
    expect(trail().at(-1)).toBe("skipped:verify_failed");
  });

  it("kills a check that runs past its time, with what it started, and says so", async () => {
    project = tempFolder("tc-verified-");
    await boot({ command: "sleep 60 & echo $! > sleeper.pid; wait", timeoutSeconds: 5, maxRuns: 1 });
    await continuedThenClosed();
    f.enforcer.handleEvent(ev.idle(S));
    const pidFile = join(project, "sleeper.pid");
    const pid = await waitFor("the check's child", async () => {
      await advance(0);
      return existsSync(pidFile) && Number(readFileSync(pidFile, "utf8"));
    });
    await advance(5000);
    await settle();
    const failed = f.rows.audit(S).find((r) => r.event === "verify_failed")!;
    expect(failed.reason).toBe("timeout");
    expect(failed.detail).toMatchObject({ exitCode: null, output: expect.stringContaining("stopped after 5 s") });
    const state = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]![0] : "";
    expect(["", "Z"]).toContain(state);
  });

  it("is killed by a person's message, and nothing continues", async () => {
    project = tempFolder("tc-verified-");
    await boot({ command: "touch started; sleep 60", timeoutSeconds: 600, maxRuns: 5 });
    await continuedThenClosed();
    await idleUntilTheCheckStarted();
    const message = ev.userMessage(S);
    f.enforcer.handleEvent(message);
    f.enforcer.handleEvent(ev.textPart(S, message.properties.info.id, "actually, stop there"));
    await advance(5);
    await settle();
    expect(trail().slice(-2)).toEqual(["verify_started", "cancelled:user_message"]);
    expect(runs().map((r) => r.state)).toEqual(["cancelled"]);
    expect(f.host.prompts).toHaveLength(1);
    expect(f.rows.countdowns(S).filter((c) => c.state === "armed")).toEqual([]);
  });

  it("is killed by a stop, and nothing continues", async () => {
    project = tempFolder("tc-verified-");
    await boot({ command: "touch started; sleep 60", timeoutSeconds: 600, maxRuns: 5 });
    await continuedThenClosed();
    await idleUntilTheCheckStarted();
    await f.enforcer.stop(S, "api");
    await settle();
    expect(trail().slice(-3)).toEqual(["verify_started", "stopped:api", "cancelled:stopped"]);
    expect(runs().map((r) => r.state)).toEqual(["cancelled"]);
    expect(f.host.prompts).toHaveLength(1);
  });

  it("interrupted by a restart, is run again after it, and not counted as a failure", async () => {
    project = tempFolder("tc-verified-");
    await boot({ command: "touch started; sleep 60", timeoutSeconds: 600, maxRuns: 1 });
    await continuedThenClosed();
    await idleUntilTheCheckStarted();
    const { folder } = f;
    await f.close();
    // After the restart, the check (now one that passes) runs again by the look it left owed.
    await boot({ command: "true", timeoutSeconds: 600, maxRuns: 1 }, {}, folder);
    await advance(f.config.leaseMs);
    await settle();
    expect(runs().map((r) => r.state)).toEqual(["interrupted", "passed"]);
    expect(trail().slice(-4)).toEqual(["resumed:restart", "verify_started", "verified", "skipped:todos_complete"]);
    expect(f.host.prompts).toHaveLength(1);
  });

  it("is not asked for a list the person watched close (no continuation went out)", async () => {
    project = tempFolder("tc-verified-");
    await boot({ command: "touch ran", timeoutSeconds: 60, maxRuns: 5 });
    f.host.setTodos(S, [["write the parser", "completed"]]);
    await idle();
    expect(trail()).toEqual(["skipped:todos_complete"]);
    expect(existsSync(join(project, "ran"))).toBe(false);
  });
});
