// The TUI plugin without a terminal: a recorded TUI API and a real engine sharing one SQLite file. The key cancels the
// running countdown durably, the palette stops and resumes without a model turn, events refresh the panel, and a
// broken database or bad options are one line in the panel, never a throw.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Config } from "../../src/config.js";
import type { PanelRenderer, TuiApi, TuiCommandSpec, TuiKeyEvent } from "../../src/tui/host-api.js";
import type { PanelLine } from "../../src/tui/panel.js";
import { createTuiPlugin } from "../../src/tui/tui-plugin.js";
import { ev } from "../support/events.js";
import { DIRECTORY, startEngine, tempFolder, type EngineFixture } from "../support/engine-fixture.js";
import { advance, settle as settleEngine, useFakeTime } from "../support/fake-time.js";

const S = "ses_tui";
let f: EngineFixture | undefined;
useFakeTime(() => f);

/** Draws nothing: keeps the panel's line function so a test can read what it would show. */
const recorder = () => {
  const panels: Array<() => PanelLine[]> = [];
  const renderer: PanelRenderer = {
    signal<T>(initial: T) {
      let value = initial;
      return [() => value, (next: T) => void (value = next)];
    },
    panel: (_theme, lines) => {
      panels.push(lines);
      return { lines };
    },
  };
  return { renderer, panels };
};

type SlotFn = (ctx: { theme: { current: Record<string, unknown> } }, props: { session_id: string }) => unknown;
type Listener = (event: { type: string; properties?: Record<string, unknown> }) => void;

/** OpenCode's TUI as the plugin sees it, recording what it registers. */
class FakeTui implements TuiApi {
  commands: TuiCommandSpec[] = [];
  bindings: Array<{ key: string; cmd: string }> = [];
  keyHandlers: Array<(input: { event: TuiKeyEvent }) => void> = [];
  listeners = new Map<string, Listener[]>();
  registered: Record<string, SlotFn> = {};
  toasts: Array<{ message: string }> = [];
  routeSession: string | undefined = S;
  keymap = {
    registerLayer: (layer: { commands: TuiCommandSpec[]; bindings: Array<{ key: string; cmd: string }> }) => {
      this.commands.push(...layer.commands);
      this.bindings.push(...layer.bindings);
    },
    intercept: (_type: "key", handler: (input: { event: TuiKeyEvent }) => void) => void this.keyHandlers.push(handler),
  };
  slots = {
    register: (plugin: { slots: Record<string, SlotFn> }) => void Object.assign(this.registered, plugin.slots),
  };
  event = {
    on: (type: string, handler: Listener) => {
      this.listeners.set(type, [...(this.listeners.get(type) ?? []), handler]);
      return () => undefined;
    },
  };
  ui = { toast: (input: { message: string }) => void this.toasts.push(input) };
  state = { path: { directory: DIRECTORY } };
  lifecycle = { onDispose: () => undefined };
  get route() {
    return {
      current: this.routeSession ? { name: "session", params: { sessionID: this.routeSession } } : { name: "home" },
    };
  }

  press(event: TuiKeyEvent) {
    for (const handler of this.keyHandlers) handler({ event });
  }

  run(name: string) {
    this.commands.find((c) => c.name === name)!.run();
  }

  emit(type: string, properties: Record<string, unknown>) {
    for (const handler of this.listeners.get(type) ?? []) handler({ type, properties });
  }

  /** OpenCode draws the sidebar of the session in view: the slot is called once, its lines are reactive. */
  drawSidebar(sessionId = S) {
    this.registered.sidebar_content!({ theme: { current: {} } }, { session_id: sessionId });
  }
}

async function startTui(api: FakeTui, options: Record<string, unknown>) {
  const { renderer, panels } = recorder();
  const handle = await createTuiPlugin(renderer)(api, options);
  api.drawSidebar();
  return { handle, panel: () => panels.at(-1)!().map((l) => l.text) };
}

async function world(config: Partial<Config> = {}, tuiOptions: Record<string, unknown> = {}) {
  f = await startEngine({ config: { countdownSeconds: 5, ...config } });
  f.host.addUserMessage(S, "build it");
  f.host.setTodos(S, [
    ["parse", "completed"],
    ["test", "in_progress"],
    ["docs", "pending"],
  ]);
  const api = new FakeTui();
  const { handle, panel } = await startTui(api, { databasePath: f.dbPath, ...tuiOptions });
  return { api, handle, panel };
}

const settle = () => settleEngine(f!);

describe("the TUI plugin", () => {
  it("shows the countdown; Esc cancels it durably (cancelled: user_key) and nothing is sent", async () => {
    const { api, handle, panel } = await world();
    f!.enforcer.handleEvent(ev.idle(S));
    await advance(5);
    await handle.refresh(S);
    expect(panel()).toEqual(["Todo continuation", "continuing in 5s · esc cancels", "0 of 20 continuations"]);
    await advance(2000);
    expect(panel()[1]).toBe("continuing in 3s · esc cancels"); // the UI clock, no read of the database
    api.press({ name: "escape", sequence: "\u001b" });
    await advance(0); // the change is written asynchronously
    expect(f!.rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "user_key" }]);
    expect(f!.rows.audit(S).at(-1)).toMatchObject({
      event: "cancelled",
      reason: "user_key",
      detail: { source: "tui", via: "escape" },
    });
    expect(api.toasts.at(-1)?.message).toBe("Countdown cancelled: nothing will be sent.");
    expect(panel()).toEqual(["Todo continuation", "cancelled by you", "0 of 20 continuations"]);
    await advance(10_000);
    await settle();
    expect(f!.host.prompts).toEqual([]);
  });

  it("Esc with no countdown running does nothing (OpenCode keeps Esc for its own uses)", async () => {
    const { api } = await world();
    api.press({ name: "escape" });
    await advance(0);
    expect(api.toasts).toEqual([]);
    expect(api.bindings).toEqual([]);
  });

  it("typing into the prompt during a countdown cancels it too (cancelOnTyping)", async () => {
    const { api, handle } = await world();
    f!.enforcer.handleEvent(ev.idle(S));
    await advance(5);
    await handle.refresh(S);
    api.press({ name: "w", sequence: "w" });
    await advance(0);
    expect(f!.rows.audit(S).at(-1)).toMatchObject({
      event: "cancelled",
      reason: "user_key",
      detail: { via: "typing" },
    });
  });

  it("a configured key is bound to the cancel command", async () => {
    const { api, handle } = await world({}, { cancelKey: "ctrl+y" });
    expect(api.bindings).toEqual([
      { key: "ctrl+y", cmd: "todo-continuation.cancel", desc: "Cancel the continuation countdown" },
    ]);
    f!.enforcer.handleEvent(ev.idle(S));
    await advance(5);
    await handle.refresh(S);
    api.press({ name: "escape" });
    await advance(0);
    expect(f!.rows.countdowns(S)).toMatchObject([{ state: "armed" }]);
    api.run("todo-continuation.cancel");
    await advance(0);
    expect(f!.rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "user_key" }]);
  });

  it("the palette's stop holds across the next idle without a model turn; resume lifts it and the session is looked at again", async () => {
    const { api, handle, panel } = await world({ leaseMs: 3000 });
    api.run("todo-continuation.stop");
    await advance(0);
    expect(f!.rows.session(S)).toMatchObject({ stop_source: "tui" });
    expect(f!.host.calls.prompt).toBe(0);
    expect(panel()).toEqual(["Todo continuation", "stopped (by tui)", "/resume-continuation to go on"]);
    f!.enforcer.handleEvent(ev.idle(S));
    await advance(10_000);
    await settle();
    expect(f!.host.prompts).toEqual([]);
    expect(f!.rows.trail(S)).toEqual(["stopped:tui", "skipped:stopped"]);
    api.run("todo-continuation.resume");
    await advance(0);
    expect(f!.rows.trail(S).at(-1)).toBe("unstopped:tui");
    await advance(1100); // a lease tick of the engine picks the resume up
    await settle();
    await handle.refresh(S);
    expect(panel()[1]).toMatch(/^continuing in \ds · esc cancels$/);
  });

  it("refreshes on OpenCode's events, not by polling", async () => {
    const { api, panel } = await world();
    panel();
    await advance(0); // the first draw reads the session once
    expect(panel()).toEqual(["Todo continuation", "watching"]);
    f!.enforcer.handleEvent(ev.idle(S));
    await advance(5);
    expect(panel()).toEqual(["Todo continuation", "watching"]); // no event reached the TUI yet
    api.emit("tui.toast.show", { title: "Todo continuation", message: "Resuming in 5s…" });
    await advance(150);
    expect(panel()[1]).toMatch(/^continuing in \ds/);
  });

  it("a database that cannot be opened is one line in the panel; the commands say so and nothing throws", async () => {
    const folder = tempFolder();
    // A file where a folder should be: no process can create the database there (root included).
    writeFileSync(join(folder, "not-a-folder"), "");
    f = await startEngine();
    const api = new FakeTui();
    const { panel } = await startTui(api, { databasePath: join(folder, "not-a-folder", "x.db") });
    await advance(0);
    expect(panel()).toEqual([
      "Todo continuation",
      expect.stringMatching(/^unavailable: cannot open the todo-continuation database/),
    ]);
    expect(() => api.press({ name: "escape" })).not.toThrow();
    expect(() => api.run("todo-continuation.stop")).not.toThrow();
  });

  it("bad options are named in the panel", async () => {
    const { panel } = await world({}, { cancelKey: "hyper+banana" });
    expect(panel()).toEqual([
      "Todo continuation",
      expect.stringContaining('unavailable: invalid configuration: cancelKey = "hyper+banana"'),
    ]);
  });
});
