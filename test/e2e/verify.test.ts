// Done means checked, inside a real OpenCode 1.18.33 with a scripted model: with `verify` set, a model that closes
// every todo without the work is continued with the check's output, does the work, and is done once the check passes;
// a check that fails the same way twice stops the session; a check that hangs is killed at its time limit with what it
// started; a person who writes during a check kills it, and nothing continues. One server, one check script that does
// what each session's scenario needs (it is told the session: TODO_CONTINUATION_SESSION_ID).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { E2E } from "./support/harness.js";
import { todowrite, type ModelReply, type ModelRequest, type ScriptContext } from "./support/scripted-model.js";
import { HEADER, scenarioOf } from "./support/world.js";

const OPEN: Array<[string, string]> = [
  ["write the parser", "completed"],
  ["add the tests", "in_progress"],
];
const DONE: Array<[string, string]> = OPEN.map(([c]) => [c, "completed"]);
const FAILED_CHECK = "the check of the work failed";

/** The scripted model: opens a list, closes it without the work when continued, and does the work only if told. */
function script(request: ModelRequest, ctx: ScriptContext): ModelReply {
  const scenario = scenarioOf(request);
  const last = ctx.lastUserText ?? "";
  if (ctx.afterTool) return { text: "Done." };
  if (!last.includes(HEADER))
    return ctx.userTexts.length > 1 ? { text: "OK, over to you." } : { toolCalls: [todowrite(OPEN)] };
  // Told its check failed, the honest model of "false-done" does the work; the others close the list again.
  if (scenario === "false-done" && last.includes(FAILED_CHECK))
    return { toolCalls: [{ name: "bash", args: { command: "touch false-done.done", description: "Do the work" } }] };
  return { toolCalls: [todowrite(DONE)] };
}

const CHECK = `s=$(cat "scenarios/$TODO_CONTINUATION_SESSION_ID")
case "$s" in
  false-done) test -f false-done.done || { echo "false-done.done is missing"; exit 1; } ;;
  same-failure) echo "FAIL parser.test.ts: expected 2, got 3"; exit 1 ;;
  *) sleep 60 & echo $! > "$s.pid"; wait ;;
esac
`;

// The waits inside are longer than the default test time: a slow machine then fails with what was waited for.
describe("verify in a real OpenCode server", { timeout: 90_000 }, () => {
  const verify = { command: "sh ./check.sh", timeoutSeconds: 3, maxRuns: 3 };
  // Done and stuck notices go to a program that appends each (its JSON on stdin) to a file of the world's.
  const world: E2E = new E2E(script, {
    verify,
    notify: [
      {
        type: "command",
        command: "/bin/sh",
        // OpenCode's HOME is the world's own (opencode-server.ts), and a notice's program runs in its environment.
        args: ["-c", 'cat >> "$HOME/notices.jsonl"; echo >> "$HOME/notices.jsonl"'],
        kinds: ["done", "stuck"],
      },
    ],
  });
  const notices = (sessionId: string) =>
    existsSync(noticesFile())
      ? readFileSync(noticesFile(), "utf8")
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { kind: string; text: string; session: { id: string } })
          .filter((n) => n.session.id === sessionId)
      : [];
  const noticesFile = () => join(world.root, "home", "notices.jsonl");

  beforeAll(async () => {
    await world.start();
    writeFileSync(join(world.server.project, "check.sh"), CHECK);
    mkdirSync(join(world.server.project, "scenarios"));
  }, 60_000);
  afterAll(async () => {
    await world.stop();
  });

  async function started(scenario: string): Promise<string> {
    const id = await world.session(scenario);
    writeFileSync(join(world.server.project, "scenarios", id), scenario);
    await world.prompt(id, `scenario: ${scenario}`);
    return id;
  }

  /** The trail without the notices' delivery rows (`notified:*`), which land whenever the channel's program ran. */
  const decisions = (id: string) => world.trail(id).filter((t) => !t.startsWith("notified:"));

  /**
   * As `trailAtRest`, with `closing` the last decision rather than the last row: a notice's delivery row may come
   * after it, or not yet.
   */
  async function atRest(id: string, closing: string, timeoutMs: number): Promise<string[]> {
    await world.waitFor(
      () => `the enforcer at rest for ${id} after ${closing} (trail so far: ${world.trail(id).join(", ")})`,
      async () => {
        const owed = world.owed(id);
        const rest = decisions(id).at(-1) === closing && owed.armed === 0 && owed.pending === 0;
        return rest && owed.recheckAt === null && (await world.sessionIdle(id));
      },
      timeoutMs,
    );
    return decisions(id);
  }

  const lastDecision = (id: string) =>
    world
      .audit(id)
      .filter((r) => r.event !== "notified")
      .at(-1)!;

  const runs = (id: string) =>
    world.rows<{ state: string; exit_code: number | null }>(
      "SELECT state, exit_code FROM verifications WHERE session_id = ? ORDER BY started_at",
      id,
    );

  /** Whether the process the check started (its pid in a file of the project) is gone: killed, not left behind. */
  const gone = (scenario: string) => {
    const pid = Number(readFileSync(join(world.server.project, `${scenario}.pid`), "utf8"));
    const stat = `/proc/${pid}/stat`;
    return !existsSync(stat) || readFileSync(stat, "utf8").split(") ")[1]![0] === "Z";
  };

  it("continues a model that closed its todos without the work, with the check's output, until the check passes", async () => {
    const id = await started("false-done");
    const trail = await atRest(id, "skipped:todos_complete", 60_000);
    expect(trail).toEqual([
      ...["armed", "fired", "injected"],
      ...["verify_started", "verify_failed:exit"],
      ...["armed", "fired", "injected"],
      ...["verify_started", "verified", "skipped:todos_complete"],
    ]);
    const [, second] = world.continuationRequests("false-done");
    const prompt = JSON.stringify(second!.messages.at(-1));
    expect(prompt).toContain(FAILED_CHECK);
    expect(prompt).toContain("| false-done.done is missing");
    const done = lastDecision(id);
    expect(done.detail).toMatchObject({ verified: { command: "sh ./check.sh" } });
    expect(runs(id).map((r) => r.state)).toEqual(["failed", "passed"]);
    // One done notice, and it says the work was checked.
    const told = await world.waitFor("the done notice", () => (notices(id).length > 0 ? notices(id) : undefined));
    expect(told).toMatchObject([
      { kind: "done", text: expect.stringMatching(/^Done, checked: sh \.\/check\.sh passed in \d+ s\.$/) },
    ]);
  });

  it("stops a session whose check fails the same way twice with no file changed", async () => {
    const id = await started("same-failure");
    const trail = await atRest(id, "skipped:verify_failed", 60_000);
    expect(trail.slice(-3)).toEqual(["verify_started", "verify_failed:exit", "skipped:verify_failed"]);
    expect(trail.filter((t) => t === "injected")).toHaveLength(2);
    expect(lastDecision(id).detail).toMatchObject({
      repeated: true,
      failures: 2,
      exitCode: 1,
      output: "FAIL parser.test.ts: expected 2, got 3\n",
    });
    const told = await world.waitFor("the stuck notice", () => (notices(id).length > 0 ? notices(id) : undefined));
    expect(told).toMatchObject([{ kind: "stuck", text: "Stopped: the check failed the same way twice." }]);
  });

  it("kills a check that hangs at its time limit, with what it started, and says so", async () => {
    const id = await started("hangs");
    const failed = await world.waitForAudit(id, "verify_failed:timeout", 30_000);
    expect(failed.detail).toMatchObject({ exitCode: null, output: expect.stringContaining("stopped after 3 s") });
    expect(gone("hangs")).toBe(true);
    // Said to the model as a check that did not finish; the same hang again stops the session.
    await atRest(id, "skipped:verify_failed", 60_000);
    expect(JSON.stringify(world.continuationRequests("hangs")[1]?.messages.at(-1))).toContain("did not finish");
  });

  it("kills the check when the person writes during it, and nothing continues", async () => {
    const id = await started("person");
    await world.waitFor("the check to start", () => existsSync(join(world.server.project, "person.pid")), 60_000);
    await world.prompt(id, "Stop there, I will check it myself.");
    await world.waitForAudit(id, "cancelled:user_message", 20_000);
    await world.waitFor("the check to be killed", () => gone("person"));
    // The person's turn ends with every todo closed and no continuation since their message: done, unchecked.
    const trail = await atRest(id, "skipped:todos_complete", 30_000);
    expect(trail.slice(-3)).toEqual(["verify_started", "cancelled:user_message", "skipped:todos_complete"]);
    expect(trail.filter((t) => t === "injected")).toHaveLength(1);
    expect(runs(id).map((r) => r.state)).toEqual(["cancelled"]);
  });
});
