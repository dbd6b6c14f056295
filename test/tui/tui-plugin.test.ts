// The TUI plugin without a terminal: a recorded TUI API and a real engine sharing one SQLite file. The key and typing
// cancel the running countdown durably, read from the database whatever is drawn, and never from a dialog; the
// countdown is drawn once, in the sidebar's panel or beside the prompt; the palette stops, resumes and allows more
// without a model turn; events refresh what is drawn; the database is opened when first needed, and while it is open
// the server's toasts give way; a broken database or bad options are one line in the panel, never a throw.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type { Config } from "../../src/config/resolve.js";
import type { PanelRenderer, TuiApi, TuiCommandSpec, TuiKeyEvent } from "../../src/tui/host-api.js";
import type { PanelLine } from "../../src/tui/panel.js";
import { createTuiPlugin } from "../../src/tui/tui-plugin.js";
import { readStatus, wasSeen, writeStatus } from "../../src/plugin/status-file.js";
import { ev } from "../support/events.js";
import { DIRECTORY, startEngine, tempFolder, type EngineFixture } from "../support/engine-fixture.js";
import { advance, settle as settleEngine, useFakeTime } from "../support/fake-time.js";
import { waitFor } from "../support/wait-for.js";

const S = "ses_tui";
let f: EngineFixture | undefined;
useFakeTime(() => f);

/** Draws nothing: keeps each drawn panel's and prompt line's functions so a test can read what they would show. */
const recorder = () => {
  const panels: Array<() => PanelLine[]> = [];
  const promptLines: Array<() => PanelLine | undefined> = [];
  /** What is being drawn now registers its clean-ups here (OpenCode's owner of a slot's nodes). */
  let cleanups: Array<() => void> = [];
  /** The signals a slot read while it was being drawn: in Solid, setting one of them would draw the slot again. */
  let read: Set<unknown> | undefined;
  const renderer: PanelRenderer = {
    signal<T>(initial: T) {
      let value = initial;
      const get = () => (read?.add(get), value);
      const set = (next: T) => {
        if (read?.has(get)) throw new Error("a slot set a signal it had read while being drawn: it would loop");
        value = next;
      };
      return [get, set];
    },
    panel: (_theme, lines) => {
      panels.push(lines);
      return { lines };
    },
    line: (_theme, line) => {
      promptLines.push(line);
      return { line };
    },
    onCleanup: (fn) => void cleanups.push(fn),
  };
  /** Draws with `draw`; the returned function takes it off the screen. */
  const drawn = (draw: () => void) => {
    cleanups = [];
    read = new Set();
    try {
      draw();
    } finally {
      read = undefined;
    }
    const mine = cleanups;
    return () => mine.forEach((fn) => fn());
  };
  return { renderer, panels, promptLines, drawn };
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
  ui = {
    toast: (input: { message: string }) => void this.toasts.push(input),
    /** The palette, or any dialog, open: keys are its own. */
    dialog: { open: false },
  };
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

  type(text: string) {
    for (const char of text) this.press({ name: char === " " ? "space" : char, sequence: char });
  }

  run(name: string) {
    this.commands.find((c) => c.name === name)!.run();
  }

  emit(type: string, properties: Record<string, unknown>) {
    for (const handler of this.listeners.get(type) ?? []) handler({ type, properties });
  }

  /** OpenCode draws a slot of the session in view: called once, its lines are reactive. */
  draw(slot: "sidebar_content" | "session_prompt_right", sessionId = S) {
    this.registered[slot]!({ theme: { current: {} } }, { session_id: sessionId });
  }
}

/** The TUI plugin started on `api`; by default OpenCode draws the session's sidebar (more than 120 columns). */
async function startTui(api: FakeTui, options: Record<string, unknown>, { sidebar = true } = {}) {
  const { renderer, panels, promptLines, drawn } = recorder();
  const handle = await createTuiPlugin(renderer)(api, options);
  const hideSidebar = sidebar ? drawn(() => api.draw("sidebar_content")) : () => undefined;
  drawn(() => api.draw("session_prompt_right"));
  return {
    handle,
    panel: () => panels.at(-1)!().map((l) => l.text),
    /** What is beside the prompt ("" when nothing). */
    besidePrompt: () => promptLines.at(-1)!()?.text ?? "",
    hideSidebar,
  };
}

async function world(config: Partial<Config> = {}, tuiOptions: Record<string, unknown> = {}, draw = { sidebar: true }) {
  f = await startEngine({ config: { countdownSeconds: 5, ...config } });
  f.host.addUserMessage(S, "build it");
  f.host.setTodos(S, [
    ["parse", "completed"],
    ["test", "in_progress"],
    ["docs", "pending"],
  ]);
  const api = new FakeTui();
  const tui = await startTui(api, { databasePath: f.dbPath, ...tuiOptions }, draw);
  return { api, ...tui };
}

/** An idle with open todos: the engine arms a countdown (which the TUI has not read yet). */
async function countdownArmed() {
  f!.enforcer.handleEvent(ev.idle(S));
  await advance(5);
  expect(f!.rows.countdowns(S)).toMatchObject([{ state: "armed" }]);
}

const settle = () => settleEngine(f!);

/** A lease tick of the engine (leaseMs 3000) picks up what the palette wrote; the countdown it arms then sends. */
async function sentAfterALeaseTick() {
  await advance(1100);
  await settle();
  await advance(5000);
  await settle();
  expect(f!.host.prompts).toHaveLength(1);
}

function readRows(path: string, sql: string): unknown[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

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

  it("typing into the prompt cancels a countdown the TUI has not drawn: it reads the database, not the screen", async () => {
    const { api, besidePrompt } = await world({}, {}, { sidebar: false });
    await countdownArmed();
    expect(besidePrompt()).toBe(""); // nothing told the TUI of the countdown yet
    api.type("also check the changelog");
    await advance(0);
    expect(f!.rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "user_key" }]);
    expect(f!.rows.audit(S).filter((a) => a.event === "cancelled")).toMatchObject([
      { reason: "user_key", detail: { source: "tui", via: "typing" } },
    ]);
    expect(api.toasts.map((t) => t.message)).toEqual(["Countdown cancelled: nothing will be sent."]);
    await advance(10_000);
    await settle();
    expect(f!.host.prompts).toEqual([]);
  });

  it("keys typed while nothing counts down write nothing", async () => {
    const { api } = await world();
    api.type("hello");
    api.press({ name: "escape" });
    await advance(0);
    expect(f!.rows.audit(S)).toEqual([]);
    expect(api.toasts).toEqual([]);
  });

  it("keys in the palette or any dialog are the dialog's: its search and the Esc that closes it cancel nothing", async () => {
    const { api } = await world();
    await countdownArmed();
    api.ui.dialog.open = true;
    api.type("todo");
    api.press({ name: "escape", sequence: "\u001b" });
    await advance(0);
    api.ui.dialog.open = false;
    expect(f!.rows.countdowns(S)).toMatchObject([{ state: "armed" }]);
    await advance(5000);
    await settle();
    expect(f!.host.prompts).toHaveLength(1);
    expect(f!.rows.audit(S).some((a) => a.event === "cancelled")).toBe(false);
  });

  it("the countdown is drawn once: in the sidebar's panel, else beside the prompt (the sidebar hidden or too narrow)", async () => {
    const { handle, panel, besidePrompt, hideSidebar } = await world();
    await countdownArmed();
    await handle.refresh(S);
    expect(panel()[1]).toBe("continuing in 5s · esc cancels");
    expect(besidePrompt()).toBe("");
    hideSidebar();
    expect(besidePrompt()).toBe("continuing in 5s · esc cancels");
    const alone = await world({}, {}, { sidebar: false });
    await countdownArmed();
    await alone.handle.refresh(S);
    expect(alone.besidePrompt()).toBe("continuing in 5s · esc cancels");
  });

  it("the UI clock ticks when the seconds left change, so the number shown follows the deadline", async () => {
    const { handle, besidePrompt } = await world({}, {}, { sidebar: false });
    await countdownArmed();
    const deadline = f!.rows.countdowns(S)[0]!.deadline_at as number;
    await handle.refresh(S);
    const shown = () => Number(/in (\d+)s/.exec(besidePrompt())?.[1]);
    await advance(deadline - 4000 - Date.now() - 1);
    expect(shown()).toBe(5);
    await advance(2); // past the boundary: the clock's tick is due at it
    expect(shown()).toBe(4);
    await advance(2998); // 1001 ms left
    expect(shown()).toBe(2);
    await advance(2);
    expect(shown()).toBe(1);
  });

  it("opens the database when first needed, not while OpenCode starts; says the TUI is there until it closes", async () => {
    const path = join(tempFolder(), "tui-first.db");
    f = await startEngine();
    const api = new FakeTui();
    const { renderer, drawn } = recorder();
    const handle = await createTuiPlugin(renderer)(api, { databasePath: path });
    expect(existsSync(path)).toBe(false);
    drawn(() => api.draw("session_prompt_right"));
    await handle.refresh(S); // what the first draw started: the open
    const tuis = () => readRows(path, "SELECT kind, directory FROM replicas WHERE kind = 'tui'");
    expect(tuis()).toEqual([{ kind: "tui", directory: DIRECTORY }]);
    await handle.dispose();
    expect(tuis()).toEqual([]);
  });

  it("while the TUI draws the countdown, the server's toasts give way to it, and come back once it closes", async () => {
    const { handle } = await world();
    await handle.refresh(S); // what the first draw started: the open
    await countdownArmed();
    await advance(1000);
    await settle();
    expect(f!.host.toasts).toEqual([]);
    await handle.dispose();
    await advance(1000);
    await settle();
    expect(f!.host.toasts.map((t) => t.message)).toEqual(["Resuming in 3s… (2 todos open)"]);
  });

  it("a configured key is bound to the cancel command", async () => {
    const { api, handle } = await world({}, { cancelKey: "ctrl+y" });
    expect(api.bindings).toEqual([
      { key: "ctrl+y", cmd: "todo-continuation.cancel", desc: "Cancel continuation countdown" },
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
    expect(panel()).toEqual(["Todo continuation", "stopped from the palette", "palette: Resume todo continuation"]);
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

  it("a parked session shows its wait; Esc ends it (unparked: key), typing does not, and nothing wakes it", async () => {
    const { api, handle, panel, besidePrompt } = await world({ leaseMs: 3000 });
    expect(await f!.enforcer.continueLater(S, { reason: "CI is running", minutes: 30 }, "build")).toMatchObject({
      parked: true,
    });
    await handle.refresh(S);
    expect(panel()).toEqual([
      "Todo continuation",
      expect.stringMatching(/^parked until (?:[A-Za-z]{3},? )?\d\d:\d\d( [AP]M)?$/),
      "as asked",
      "esc ends the wait",
    ]);
    api.type("a thought");
    await advance(0);
    expect(f!.rows.trail(S)).toEqual(["parked:agent"]);
    api.press({ name: "escape", sequence: "\u001b" });
    await advance(0);
    expect(f!.rows.trail(S)).toEqual(["parked:agent", "unparked:key"]);
    expect(api.toasts.at(-1)?.message).toBe("Wait cancelled: nothing will wake this session.");
    expect(panel()[1]).not.toMatch(/parked/);
    expect(besidePrompt()).toBe("");
    await advance(31 * 60_000);
    await settle();
    expect(f!.host.prompts).toEqual([]);
  });

  it("a check running shows its command and seconds; Esc cancels it (cancelled: user_key), its process is killed at the engine's next tick, nothing is sent", async () => {
    const project = tempFolder("tc-tui-check-");
    const verify = {
      command: "touch started; sleep 60 & echo $! > sleeper.pid; wait",
      timeoutSeconds: 600,
      maxRuns: 5,
    };
    f = await startEngine({ directory: project, config: { countdownSeconds: 1, leaseMs: 3000, verify } });
    f.host.addUserMessage(S, "build it");
    f.host.setTodos(S, [["test", "in_progress"]]);
    f.enforcer.handleEvent(ev.idle(S));
    await advance(1100);
    await settle();
    expect(f.host.prompts).toHaveLength(1);
    f.host.setTodos(S, [["test", "completed"]]);
    const api = new FakeTui();
    const { handle, panel, besidePrompt, hideSidebar } = await startTui(api, { databasePath: f.dbPath });
    f.enforcer.handleEvent(ev.idle(S));
    const pidFile = join(project, "sleeper.pid");
    await waitFor("the check to start", async () => {
      await advance(0);
      return existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "";
    });
    await handle.refresh(S);
    expect(panel().slice(0, 3)).toEqual([
      "Todo continuation",
      expect.stringMatching(/^checking · \d+s$/),
      "esc cancels",
    ]);
    await advance(2100);
    expect(panel()[1]).toMatch(/^checking · [2-9]s$/); // the UI clock, and a read each second while it runs
    expect(besidePrompt()).toBe("");
    hideSidebar();
    expect(besidePrompt()).toMatch(/^checking · \d+s · esc cancels$/);
    api.press({ name: "escape", sequence: "\u001b" });
    await advance(0);
    expect(f.rows.trail(S).slice(-2)).toEqual(["verify_started", "cancelled:user_key"]);
    expect(api.toasts.at(-1)?.message).toBe("Check cancelled: nothing will be sent.");
    // The engine's next lease tick finds the run no longer its own and kills the command.
    await advance(1100);
    await settle();
    const pid = Number(readFileSync(pidFile, "utf8"));
    const stat = `/proc/${pid}/stat`;
    expect(!existsSync(stat) || readFileSync(stat, "utf8").split(") ")[1]![0] === "Z").toBe(true);
    expect(f.host.prompts).toHaveLength(1);
    expect(f.rows.verifications(S).map((r) => r.state)).toEqual(["cancelled"]);
  });

  it("the palette's wake continues a parked session now, through a normal countdown", async () => {
    const { api } = await world({ leaseMs: 3000 }, {}, { sidebar: false });
    await f!.enforcer.continueLater(S, { reason: "CI is running", minutes: 30 }, "build");
    api.run("todo-continuation.wake");
    await advance(0);
    expect(f!.rows.trail(S)).toEqual(["parked:agent", "woke:palette"]);
    expect(api.toasts.at(-1)?.message).toBe("Woken: it goes on soon if todos are open.");
    await sentAfterALeaseTick();
    expect(JSON.stringify(f!.host.prompts[0])).toContain("Woken early by the person");
    api.run("todo-continuation.wake");
    await advance(0);
    expect(api.toasts.at(-1)?.message).toBe("This session is not parked.");
  });

  it("the palette's resume lifts a provider's refusal, says so, and the next look continues", async () => {
    const { api } = await world({ leaseMs: 3000 });
    const message = "Unauthorized: invalid api key";
    f!.enforcer.handleEvent({
      type: "session.error",
      properties: { sessionID: S, error: { name: "APIError", data: { message, statusCode: 401, isRetryable: false } } },
    });
    f!.host.addAssistantMessage(S, { error: { name: "APIError", statusCode: 401, isRetryable: false, message } });
    f!.enforcer.handleEvent(ev.idle(S));
    await advance(10);
    await settle();
    expect(f!.rows.trail(S).at(-1)).toBe("skipped:provider_error");
    api.run("todo-continuation.resume");
    await advance(0);
    expect(api.toasts.at(-1)?.message).toBe(
      "Lifted the provider's refusal.\nResumed: it goes on soon if todos are open.",
    );
    await sentAfterALeaseTick();
  });

  it("the palette's Allow more lifts a spent budget with as much again, says so, and the next look continues", async () => {
    const { api, handle, panel } = await world({ leaseMs: 3000 });
    f!.store.raw.run(
      "INSERT INTO sessions (session_id, directory, continuations, notified_stop, created_at, updated_at) VALUES (?, ?, 20, 'budget_exhausted', ?, ?)",
      S,
      DIRECTORY,
      Date.now(),
      Date.now(),
    );
    f!.enforcer.handleEvent(ev.idle(S));
    await advance(10);
    await settle();
    expect(f!.rows.trail(S)).toEqual(["skipped:budget_exhausted"]);
    await handle.refresh(S);
    expect(panel().slice(0, 3)).toEqual([
      "Todo continuation",
      "stopped: the budget of 20 is spent",
      "palette: Allow more to go on",
    ]);
    api.run("todo-continuation.allow");
    await advance(0);
    expect(f!.rows.trail(S).at(-1)).toBe("unstopped:tui");
    expect(f!.rows.session(S)).toMatchObject({ allowed_continuations: 20, continuations: 20 });
    expect(api.toasts.at(-1)?.message).toBe(
      "Allowed 20 more continuations.\nLifted the spent budget.\nIt goes on soon if todos are open.",
    );
    await sentAfterALeaseTick();
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
    const { panel, handle } = await startTui(api, { databasePath: join(folder, "not-a-folder", "x.db") });
    await handle.refresh(S);
    expect(panel()).toEqual([
      "Todo continuation",
      expect.stringMatching(/^unavailable: cannot open the todo-continuation database/),
    ]);
    expect(() => api.press({ name: "escape" })).not.toThrow();
    expect(() => api.run("todo-continuation.stop")).not.toThrow();
  });

  it("bad options are named in the panel and in a toast at start", async () => {
    const { api, panel } = await world({}, { cancelKey: "hyper+banana" });
    expect(panel()).toEqual([
      "Todo continuation",
      expect.stringContaining('unavailable: invalid configuration: in tui.json: cancelKey = "hyper+banana"'),
    ]);
    expect(api.toasts).toEqual([
      expect.objectContaining({
        variant: "error",
        message: expect.stringContaining('cancelKey = "hyper+banana"; allowed: an OpenCode key'),
      }),
    ]);
  });

  it("what the server plugin wrote of itself: one toast, a line in the panel, and marked seen for the server", async () => {
    const news = (problems: string[], pid: number) =>
      writeStatus({
        format: 1,
        version: "0.1.0",
        directory: DIRECTORY,
        pid,
        startedAt: new Date().toISOString(),
        state: "off",
        headline: "off: invalid configuration",
        database: "",
        problems,
        warnings: [],
        files: [],
        options: {},
      });
    const problem =
      "invalid configuration: countdownSecs = 3; allowed: a known option (did you mean countdownSeconds?)";
    news([problem], 1);
    const { api, panel, handle } = await world();
    await handle.refresh(S);
    expect(api.toasts).toEqual([
      expect.objectContaining({ title: "todo-continuation is off", variant: "error", message: problem }),
    ]);
    expect(wasSeen(readStatus(DIRECTORY)!)).toBe(true);
    expect(panel().slice(0, 3)).toEqual([
      "Todo continuation",
      "off: invalid configuration",
      "todo-continuation doctor says why",
    ]);
    // Read again on the server's events and early looks: the same news is not shown twice, a new start's is.
    api.emit("session.idle", { sessionID: S });
    await advance(20_000);
    expect(api.toasts).toHaveLength(1);
    news([], 2);
    api.emit("session.idle", { sessionID: S });
    expect(panel()[1]).not.toBe("off: invalid configuration");
    expect(api.toasts).toHaveLength(1);
  });
});
