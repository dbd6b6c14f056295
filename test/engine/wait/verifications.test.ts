// Verifications promises: of several engines asked to check a session at once, one runs the command; a run ends with
// its result written once, as its owner's, owing the session a look; a run cancelled elsewhere (another process saw the
// person's message) is killed at its owner's next tick; one whose process died is interrupted by whoever finds it, and
// this process's own are interrupted at its stop; secrets of the environment never reach the row. Over the engine's
// context and a real SQLite file, the command run by a stand-in that waits for the test's word.
import { afterEach, describe, expect, it } from "vitest";
import type { CheckResult, RunLimits } from "../../../src/engine/wait/run-check.js";
import { Verifications } from "../../../src/engine/wait/verifications.js";
import { changeSession } from "../../../src/store/changes/change-session.js";
import { cancelVerification } from "../../../src/store/changes/verify.js";
import {
  deadOwner,
  forgetOwners,
  liveOwner,
  makeContext,
  rows,
  store,
  useTestFiles,
} from "../../support/engine-context.js";
import { DIRECTORY, testConfig } from "../../support/engine-fixture.js";
import { deferred, type Deferred } from "../../support/deferred.js";

// Real time: the stand-in's commands end when the test says, and the rows are awaited as they are written.
useTestFiles({ fakeTime: false });
afterEach(forgetOwners);

const S = "ses_verify";
const scope = { sessionId: S, directory: DIRECTORY, server: null };
const VERIFY = { command: "npm test", timeoutSeconds: 600, maxRuns: 5 };
const trail = () => rows.audit(S).map((r) => (r.reason ? `${r.event}:${r.reason}` : r.event));
const runs = () => rows.verifications(S).map((r) => r.state);

/** An engine's Verifications whose command finishes when the test says (or is killed when aborted). */
function engine(owner = liveOwner()) {
  const started: Array<{ command: string; cwd: string; limits?: RunLimits; result: Deferred<CheckResult> }> = [];
  const ctx = makeContext({ store, config: testConfig(":memory:", { verify: VERIFY }), owner });
  const verifications = new Verifications(ctx, (command, cwd, limits) => {
    const result = deferred<CheckResult>();
    limits?.signal?.addEventListener("abort", () =>
      result.resolve({ exitCode: null, output: "", timedOut: false, aborted: true }),
    );
    started.push({ command, cwd, limits, result });
    return result.promise;
  });
  return { ctx, verifications, started };
}

async function continuedOnce(): Promise<void> {
  await store.change(changeSession(scope, Date.now(), { continuations: 1 }));
}

const until = async (done: () => boolean) => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(done()).toBe(true);
};

const savedEnv = { ...process.env };
afterEach(() => {
  process.env = { ...savedEnv };
});

describe("Verifications", () => {
  it("of several engines asked at once, one runs the command, in the session's folder, with its time limit", async () => {
    await continuedOnce();
    const engines = [engine(), engine(), engine()];
    const checks = engines.map((e) => e.verifications.check(S, undefined));
    await until(() => engines.some((e) => e.started.length > 0));
    const runner = engines.find((e) => e.started.length > 0)!;
    expect(engines.flatMap((e) => e.started)).toHaveLength(1);
    expect(runner.started[0]).toMatchObject({
      command: "npm test",
      cwd: DIRECTORY,
      limits: { timeoutMs: 600_000, env: { TODO_CONTINUATION_SESSION_ID: S } },
    });
    runner.started[0]!.result.resolve({ exitCode: 0, output: "all green\n", timedOut: false });
    expect((await Promise.all(checks)).filter(Boolean)).toHaveLength(1);
    expect(trail()).toEqual(["verify_started", "verified"]);
    expect(rows.verifications(S)[0]).toMatchObject({ state: "passed", exit_code: 0, output_tail: "all green\n" });
    expect(rows.session(S)?.recheck_at).not.toBeNull();
  });

  it("says how a run failed: its exit, its time limit, or a command the shell could not start", async () => {
    const e = engine();
    const outcomes: Array<[CheckResult, string]> = [
      [{ exitCode: 1, output: "1 failed\n", timedOut: false }, "verify_failed:exit"],
      [{ exitCode: null, output: "(stopped after 600 s)", timedOut: true }, "verify_failed:timeout"],
      [{ exitCode: 127, output: "sh: 1: npx: not found\n", timedOut: false }, "verify_failed:not_run"],
    ];
    for (const [i, [result, row]] of outcomes.entries()) {
      await store.change(changeSession(scope, Date.now(), { continuations: i + 1 }));
      const check = e.verifications.check(S, undefined);
      await until(() => e.started.length === i + 1);
      e.started[i]!.result.resolve(result);
      expect(await check).toBe(true);
      expect(trail().at(-1)).toBe(row);
    }
    expect(rows.verifications(S).map((r) => r.failures)).toEqual([1, 2, 3]);
  });

  it("keeps the environment's secrets out of what it writes", async () => {
    process.env.TC_TEST_API_TOKEN = "s3cr3t-value-123";
    await continuedOnce();
    const e = engine();
    const check = e.verifications.check(S, undefined);
    await until(() => e.started.length === 1);
    e.started[0]!.result.resolve({ exitCode: 1, output: "token=s3cr3t-value-123 rejected\n", timedOut: false });
    await check;
    expect(rows.verifications(S)[0]!.output_tail).toBe("token=[secret] rejected\n");
    expect(JSON.stringify(rows.audit(S))).not.toContain("s3cr3t-value-123");
  });

  it("kills its command at the next tick once another process cancelled the run", async () => {
    await continuedOnce();
    const e = engine();
    const check = e.verifications.check(S, undefined);
    await until(() => e.started.length === 1);
    // Another process saw the person's message.
    await store.change(cancelVerification(scope, "user_message", Date.now()));
    expect(e.started[0]!.limits?.signal?.aborted).toBe(false);
    await e.verifications.tick("lease_expired");
    expect(e.started[0]!.limits?.signal?.aborted).toBe(true);
    expect(await check).toBe(false);
    expect(e.verifications.has(S)).toBe(false);
    expect(trail()).toEqual(["verify_started", "cancelled:user_message"]);
  });

  it("interrupts a run whose process is gone, owing its session the look that runs it again", async () => {
    await continuedOnce();
    const dead = engine(deadOwner());
    void dead.verifications.check(S, undefined);
    await until(() => dead.started.length === 1);
    const alive = engine();
    expect(await alive.verifications.recover("restart")).toBe(1);
    expect(runs()).toEqual(["interrupted"]);
    expect(trail()).toEqual(["verify_started", "resumed:restart"]);
    expect(rows.session(S)?.recheck_at).not.toBeNull();
    // A live owner's run is left alone.
    await store.change(changeSession(scope, Date.now(), { continuations: 2 }));
    const owner = engine();
    void owner.verifications.check(S, undefined);
    await until(() => owner.started.length === 1);
    expect(await alive.verifications.recover("restart")).toBe(0);
    await owner.verifications.stop("restart");
    expect(runs()).toEqual(["interrupted", "interrupted"]);
    expect(owner.started[0]!.limits?.signal?.aborted).toBe(true);
  });
});
