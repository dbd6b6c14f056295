// Work as progress, inside a real OpenCode 1.18.33 with a scripted model, with OpenCode's snapshots off (the e2e
// default) and on (a git project): a model that writes a new file on every continuation and closes a todo every
// fourth goes on until both todos are done; one that never closes a todo is stopped after `workWithoutProgressLimit`;
// one that writes the same content again and again is stopped as fast as one that does nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { E2E } from "./support/harness.js";
import { HEADER, scenarioOf, type AuditRow } from "./support/world.js";
import type { ModelReply, ModelRequest, ScriptContext } from "./support/scripted-model.js";
import { todowrite } from "./support/scripted-model.js";

const TODOS = ["build the importer", "build the exporter"];
const write = (filePath: string, content: string) => ({ name: "write", args: { filePath, content } });

function script(request: ModelRequest, ctx: ScriptContext): ModelReply {
  if (ctx.afterTool) return { text: "I will stop here for now." };
  const scenario = scenarioOf(request);
  // Which continuation this turn answers (0: the person's first message).
  const n = ctx.userTexts.filter((t) => t.includes(HEADER)).length;
  const closed =
    scenario === "steady-worker" || scenario === "shell-worker" ? Math.min(TODOS.length, Math.floor(n / 4)) : 0;
  const todos = todowrite(TODOS.map((c, i): [string, string] => [c, i < closed ? "completed" : "in_progress"]));
  if (scenario === "same-content") return { toolCalls: [todos, write("same/notes.md", "unchanged\n")] };
  if (scenario === "liar" && n > 0) return { text: "All done! Everything is finished." };
  if (scenario === "churn") {
    // Statuses toggled back and forth while the same file is written with the same content.
    const toggled = todowrite(
      TODOS.map((c, i): [string, string] => [c, (i + n) % 2 === 0 ? "in_progress" : "pending"]),
    );
    return { toolCalls: [toggled, write("churn/notes.md", "the same notes\n")] };
  }
  if (scenario === "shell-worker") {
    // A new file on every turn, made by a shell command: no writing tool names it.
    const command = `mkdir -p shell && echo "step ${n}" > shell/step-${n}.txt`;
    return { toolCalls: [todos, { name: "bash", args: { command, description: "Write the next step" } }] };
  }
  // steady-worker and endless-worker: a new file on every turn.
  return { toolCalls: [todos, write(`${scenario}/step-${n}.txt`, `step ${n}\n`)] };
}

const worlds = [
  { snapshots: "off", world: new E2E(script, { countdownSeconds: 1 }) },
  { snapshots: "on", world: new E2E(script, { countdownSeconds: 1 }, { config: { snapshot: true }, git: true }) },
];

describe.each(worlds)("work as progress in a real OpenCode (snapshots $snapshots)", ({ snapshots, world }) => {
  beforeAll(async () => {
    await world.start();
  }, 60_000);
  afterAll(async () => {
    await world.stop();
  });

  const continuations = (id: string) => world.audit(id).filter((r) => r.event === "injected");
  const progressOf = (rows: AuditRow[]) => rows.map((r) => (r.detail.progress as { counted?: string })?.counted);

  it("a steady worker (a new file every turn, a todo closed every fourth) finishes both todos with no user action", async () => {
    const id = await world.session("steady-worker");
    await world.prompt(id, "scenario: steady-worker");
    const trail = await world.trailAtRest(id, "skipped:todos_complete", 90_000);
    expect(trail).toEqual([
      ...Array.from({ length: 8 }, () => ["armed", "fired", "injected"]).flat(),
      "skipped:todos_complete",
    ]);
    expect((await world.todos(id)).map((t) => t.status)).toEqual(["completed", "completed"]);
    // Each continuation says what the turn before it counted as: nothing to compare with, then files, a todo at 4.
    expect(progressOf(continuations(id))).toEqual([
      undefined,
      "files",
      "files",
      "files",
      "todos",
      "files",
      "files",
      "files",
    ]);
    // OpenCode's `patch` parts exist only with snapshots on: the files a step changed, by any tool.
    const parts = (await world.messages(id)).flatMap((m) => m.parts);
    expect(parts.some((p) => p.type === "patch")).toBe(snapshots === "on");
    expect(continuations(id)[3]!.detail).toMatchObject({
      progress: { counted: "files", filesChanged: 1, filesChurned: 0 },
      work: { continuations: 3, limit: 8 },
    });
    console.log(`e2e work (snapshots ${snapshots}): steady worker, ${continuations(id).length} continuations`);
  }, 120_000);

  it("a worker that never closes a todo is stopped after workWithoutProgressLimit (8) continuations, saying so", async () => {
    const id = await world.session("endless-worker");
    await world.prompt(id, "scenario: endless-worker");
    const trail = await world.trailAtRest(id, "skipped:stagnation", 90_000);
    expect(trail).toEqual([
      ...Array.from({ length: 8 }, () => ["armed", "fired", "injected"]).flat(),
      "skipped:stagnation",
    ]);
    expect(world.audit(id).at(-1)!.detail).toMatchObject({
      work: "files",
      workContinuations: 8,
      limit: 8,
      filesChanged: 1,
      unproductiveContinuations: 0,
    });
    expect(world.continuationRequests("endless-worker")).toHaveLength(8);
  }, 120_000);

  it("files changed by a shell command are work only where OpenCode says which (its snapshots on)", async () => {
    const id = await world.session("shell-worker");
    await world.prompt(id, "scenario: shell-worker");
    if (snapshots === "on") {
      // As the steady worker: the `patch` parts name each new file; a todo closes every fourth turn.
      const trail = await world.trailAtRest(id, "skipped:todos_complete", 90_000);
      expect(trail).toHaveLength(8 * 3 + 1);
      expect(progressOf(continuations(id)).slice(1, 4)).toEqual(["files", "files", "files"]);
    } else {
      // Nothing names the files: three continuations without progress, then the usual stop.
      const trail = await world.trailAtRest(id, "skipped:stagnation", 60_000);
      expect(trail).toHaveLength(3 * 3 + 1);
      expect(progressOf(continuations(id)).slice(1)).toEqual(["none", "none"]);
    }
  }, 120_000);

  it("the same content written on every turn is not work: it stops within stagnationLimit + 1 continuations", async () => {
    const id = await world.session("same-content");
    await world.prompt(id, "scenario: same-content");
    const trail = await world.trailAtRest(id, "skipped:stagnation", 60_000);
    expect(trail).toEqual([
      ...Array.from({ length: 3 }, () => ["armed", "fired", "injected"]).flat(),
      "skipped:stagnation",
    ]);
    expect(world.audit(id).at(-1)!.detail).toMatchObject({ unproductiveContinuations: 3, limit: 3 });
    expect(
      continuations(id)
        .slice(1)
        .map((r) => r.detail.progress),
    ).toEqual([
      { counted: "none", filesChanged: 0, filesChurned: 1 },
      { counted: "none", filesChanged: 0, filesChurned: 1 },
    ]);
  }, 90_000);

  it("statuses toggled while the same file is rewritten stop as fast as plain churn", async () => {
    const id = await world.session("churn");
    await world.prompt(id, "scenario: churn");
    // The first toggle moves a todo forward (progress); the three after it move nothing already seen.
    const trail = await world.trailAtRest(id, "skipped:stagnation", 60_000);
    expect(trail).toEqual([
      ...Array.from({ length: 4 }, () => ["armed", "fired", "injected"]).flat(),
      "skipped:stagnation",
    ]);
    expect(progressOf(continuations(id))).toEqual([undefined, "todos", "none", "none"]);
  }, 90_000);

  it('a model that answers "All done!" and touches nothing stops after one continuation', async () => {
    const id = await world.session("liar");
    await world.prompt(id, "scenario: liar");
    expect(await world.trailAtRest(id, "skipped:no_progress_reply", 30_000)).toEqual([
      "armed",
      "fired",
      "injected",
      "skipped:no_progress_reply",
    ]);
  }, 60_000);
});
