// What a person sees in OpenCode's own TUI (in tmux) when the configuration is wrong: the server plugin's refusal of a
// misspelt option and a bad value in the project's todo-continuation.jsonc is a toast at start and a line in the
// panel, and the server does not show it a second time; the TUI module's own bad option (tui.json) is a toast and the
// panel's line.
import { join } from "node:path";
import { mkdirSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readStatus, wasSeen } from "../../src/plugin/status-file.js";
import { TuiWorld, useTuiWorld } from "./support/tui.js";
import { script } from "./scenarios.js";

/**
 * The screen's text with the toast's border, the line breaks of its wrapping and, on a narrow screen, the pieces of
 * OpenCode's logo beside its lines taken out.
 */
const unwrapped = (screen: string) => screen.replace(/[┃█▀▄\s]+/g, " ");
const stateOf = (world: TuiWorld) => ({ XDG_STATE_HOME: join(world.root, "home", "state") });

/** A TUI world whose project's todo-continuation.jsonc has a misspelt option and a bad value. */
function misconfigured(size?: { columns: number; rows: number }): TuiWorld {
  const world: TuiWorld = new TuiWorld(script, {
    size,
    prepare: () => {
      mkdirSync(join(world.project, ".opencode"), { recursive: true });
      writeFileSync(
        join(world.project, ".opencode", "todo-continuation.jsonc"),
        '{ "countdownSecs": 5, "maxContinuations": "many" }\n',
      );
    },
  });
  useTuiWorld(world, { startTimeoutMs: 90_000 });
  return world;
}

/** The toast at start, naming the nearest option and the bad value. */
async function toastOf(world: TuiWorld): Promise<string> {
  const toast = await world.waitScreen("the toast saying the enforcer is off", (s) =>
    s.includes("todo-continuation is off"),
  );
  expect(unwrapped(toast)).toContain("countdownSecs = 5; allowed: a known option (did you mean countdownSeconds?)");
  expect(unwrapped(toast)).toContain('maxContinuations = "many"; allowed: an integer from 1 to 100000');
  return toast;
}

describe("a misspelt option in the project's config file, in the real TUI", () => {
  const world = misconfigured();

  it("is a toast at start naming the nearest option and the bad value, then a line in the session's panel", async () => {
    await toastOf(world);
    const status = readStatus(world.project, stateOf(world))!;
    expect(status.state).toBe("off");
    expect(wasSeen(status, stateOf(world))).toBe(true);
    await world.say("scenario: basic");
    const panel = await world.waitScreen("the panel's line", (s) => s.includes("off: invalid configuration"), 30_000);
    expect(panel).toContain("todo-continuation doctor says why");
    expect(panel).toContain("Todo continuation");
  });
});

describe("the same at 100×30, where OpenCode draws no sidebar", () => {
  const world = misconfigured({ columns: 100, rows: 30 });

  it("is the same toast at start, whole on the narrow screen", async () => {
    await toastOf(world);
  });
});

describe("a bad option of the TUI module in tui.json, in the real TUI", () => {
  const world = new TuiWorld(script, { tui: { cancelKey: "hyper+banana" } });
  useTuiWorld(world, { startTimeoutMs: 90_000 });

  it("is a toast at start and the panel's line", async () => {
    const toast = await world.waitScreen("the toast refusing the TUI's options", (s) =>
      s.includes("TUI options refused"),
    );
    expect(unwrapped(toast)).toContain('cancelKey = "hyper+banana"');
    await world.say("scenario: basic");
    const panel = await world.waitScreen("the panel's line", (s) => s.includes("unavailable: invalid"), 30_000);
    expect(panel).toContain("Todo continuation");
  });
});
