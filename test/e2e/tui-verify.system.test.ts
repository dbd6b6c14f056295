// The check of a finished list in OpenCode's own TUI (tmux, 160×45: the sidebar shows): while the `verify` command
// runs, the panel says "checking" with its seconds and the key; Esc cancels it (audit cancelled/user_key), the server's
// next lease tick kills the command, and nothing is sent.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { todowrite, type ModelReply, type ModelRequest, type ScriptContext } from "./support/scripted-model.js";
import { FIRST_TURN_MS, TuiWorld, useTuiWorld } from "./support/tui.js";
import { HEADER } from "./support/world.js";

/** Opens two todos, and closes them (without any work) when continued. */
function script(_request: ModelRequest, ctx: ScriptContext): ModelReply {
  if (ctx.afterTool) return { text: "Done." };
  const todos: Array<[string, string]> = [
    ["write the parser", "completed"],
    ["add the tests", ctx.lastUserText?.includes(HEADER) ? "completed" : "in_progress"],
  ];
  return { toolCalls: [todowrite(todos)] };
}

describe("the check of a finished list in the real OpenCode TUI", () => {
  const verify = { command: "sleep 60 & echo $! > check.pid; wait", timeoutSeconds: 600, maxRuns: 5 };
  const world = new TuiWorld(script, { server: { countdownSeconds: 2, leaseMs: 3000, verify } });

  useTuiWorld(world, { startTimeoutMs: 90_000 });

  it(
    "the panel says checking with its seconds and the key; Esc cancels it, the command is killed, nothing is sent",
    async () => {
      await world.say("scenario: tui-verify");
      const checking = await world.waitScreen(
        "the check in the panel",
        (s) => /checking · \d+s[\s\S]*esc cancels/.test(s),
        FIRST_TURN_MS + 20_000,
      );
      expect(checking).toContain("Todo continuation");
      const session = world.sessionId()!;
      expect(world.trail(session).filter((t) => t !== "skipped:in_flight")).toEqual([
        ...["armed", "fired", "injected"],
        "verify_started",
      ]);
      world.keys("Escape");
      await world.waitFor("the check cancelled by the key", () => world.trail(session).includes("cancelled:user_key"));
      await world.waitScreen("the panel after Esc", (s) => !/checking · \d+s/.test(s), 10_000);
      const pid = Number(readFileSync(join(world.project, "check.pid"), "utf8"));
      await world.waitFor("the command killed at the server's next lease tick", () => {
        const stat = `/proc/${pid}/stat`;
        return !existsSync(stat) || readFileSync(stat, "utf8").split(") ")[1]![0] === "Z";
      });
      expect(world.rows("SELECT state FROM verifications WHERE session_id = ?", session)).toEqual([
        { state: "cancelled" },
      ]);
      expect(world.continuationRequests()).toHaveLength(1);
    },
    FIRST_TURN_MS + 60_000,
  );
});
