// The TUI side: a panel in the session sidebar, a key that cancels the running countdown, and palette entries that
// stop and resume continuation without a model turn. It reads and writes the same database as the server plugin:
// a cancel or a stop is a row, which the server side obeys at its next tick, at the deadline and before the prompt
// (so it holds across a restart and whatever the timing). It decides nothing itself and never throws into the TUI:
// a missing or broken database is one line in the panel.
import { openStore } from "../store/open.js";
import type { OperatorStore } from "../store/operator.js";
import { Controls } from "./controls.js";
import type { PanelRenderer, TuiApi, TuiKeyEvent } from "./host-api.js";
import { keyLabel, resolveTuiOptions, type TuiOptions } from "./options.js";
import { panelLines, type PanelLine } from "./panel.js";
import { oneLine, SessionViews } from "./session-views.js";

/** Events after which what the panel shows may have changed (the server decides a few milliseconds later). */
const REFRESH_ON = [
  "session.idle",
  "session.status",
  "session.error",
  "session.compacted",
  "session.deleted",
  "todo.updated",
  "message.updated",
  "tui.toast.show",
];
/** A waiting store (another process writing) must never freeze the TUI for long. */
const BUSY_TIMEOUT_MS = 200;

const COMMANDS = {
  cancel: "todo-continuation.cancel",
  stop: "todo-continuation.stop",
  resume: "todo-continuation.resume",
};

function sessionOf(properties: Record<string, unknown> | undefined): string | undefined {
  const info = properties?.info as Record<string, unknown> | undefined;
  const part = properties?.part as Record<string, unknown> | undefined;
  const id = properties?.sessionID ?? info?.sessionID ?? part?.sessionID ?? info?.id;
  return typeof id === "string" ? id : undefined;
}

/** A printable key typed into the prompt (not a shortcut). */
function isTyping(event: TuiKeyEvent): boolean {
  if (event.ctrl || event.meta) return false;
  return (
    event.name === "space" ||
    (typeof event.sequence === "string" && event.sequence.length === 1 && event.sequence >= " ")
  );
}

export interface TuiPluginHandle {
  /** Reads the session's state again now (the panel updates). */
  refresh(sessionId: string): Promise<void>;
  dispose(): void;
}

interface Parts {
  api: TuiApi;
  renderer: PanelRenderer;
  options: TuiOptions | undefined;
  views: SessionViews;
  controls: Controls;
}

/** The palette entries, and the cancel key bound when it is not Escape (which is watched, never bound). */
function registerCommands({ api, controls }: Parts, cancelKey: string): void {
  api.keymap.registerLayer({
    commands: [
      {
        namespace: "palette",
        name: COMMANDS.cancel,
        title: "Cancel the continuation countdown",
        desc: "Nothing is sent; the next idle starts a new one",
        category: "Todo continuation",
        run: () => void controls.cancel("palette", true),
      },
      {
        namespace: "palette",
        name: COMMANDS.stop,
        title: "Stop todo continuation",
        desc: "For this session, across restarts, until resumed; no model turn",
        category: "Todo continuation",
        run: () => void controls.stop(),
      },
      {
        namespace: "palette",
        name: COMMANDS.resume,
        title: "Resume todo continuation",
        desc: "Lift a stop or a pause and start the counts over",
        category: "Todo continuation",
        run: () => void controls.resume(),
      },
    ],
    // Escape is watched, never bound: OpenCode keeps every use it has for it (closing dialogs, interrupting).
    bindings:
      cancelKey === "escape"
        ? []
        : [{ key: cancelKey, cmd: COMMANDS.cancel, desc: "Cancel the continuation countdown" }],
  });
}

/** The key and typing, watched (not consumed), cancel the running countdown of the session in view. */
function watchKeys({ api, options, views, controls }: Parts, cancelKey: string): void {
  api.keymap.intercept("key", ({ event }) => {
    if (event.name === "escape" && cancelKey === "escape") return void controls.cancel("escape", false);
    const sessionId = controls.inView();
    if (options?.cancelOnTyping && sessionId && views.views.get(sessionId)?.countdown && isTyping(event))
      void controls.cancel("typing", false);
  });
}

/** The panel in the session sidebar; it reads the session's state the first time it is drawn. */
function registerPanel({ api, renderer, views }: Parts, cancelKey: string): void {
  api.slots.register({
    order: 450,
    slots: {
      sidebar_content(ctx, props) {
        const lines = (): PanelLine[] => {
          views.version();
          const sessionId = props.session_id;
          if (!views.views.has(sessionId) && !views.problem) queueMicrotask(() => void views.refresh(sessionId));
          const view = views.problem ? { problem: views.problem } : views.views.get(sessionId);
          return view ? panelLines({ view, now: views.now(), cancelKey: keyLabel(cancelKey) }) : [];
        };
        return renderer.panel(ctx.theme, lines);
      },
    },
  });
}

/** The TUI plugin function, drawing with `renderer` (OpenCode's Solid renderer; a recorder in tests). */
export function createTuiPlugin(renderer: PanelRenderer) {
  return async function tui(api: TuiApi, rawOptions?: unknown): Promise<TuiPluginHandle> {
    let options: TuiOptions | undefined;
    let store: OperatorStore | undefined;
    let problem: string | undefined;
    try {
      options = resolveTuiOptions(rawOptions ?? {}, process.env);
      store = await openStore(options.databasePath, { busyTimeoutMs: BUSY_TIMEOUT_MS, kind: "tui" });
    } catch (error) {
      problem = oneLine(error);
    }
    const views = new SessionViews(renderer, store, problem);
    const parts: Parts = { api, renderer, options, views, controls: new Controls(api, store, views) };
    const cancelKey = options?.cancelKey ?? "escape";
    const unsubscribes: Array<() => void> = [];
    try {
      registerCommands(parts, cancelKey);
      watchKeys(parts, cancelKey);
      for (const type of REFRESH_ON)
        unsubscribes.push(api.event.on(type, (event) => views.refreshSoon(sessionOf(event.properties))));
      registerPanel(parts, cancelKey);
    } catch (error) {
      views.problem = `the TUI refused a registration: ${oneLine(error)}`;
    }
    let disposed = false;
    const dispose = () => {
      if (disposed) return;
      disposed = true;
      views.dispose();
      for (const unsubscribe of unsubscribes) unsubscribe();
      // Closing a file that is already gone must not break OpenCode's exit.
      void store?.close().catch(() => undefined);
    };
    api.lifecycle.onDispose(dispose);
    return { refresh: (sessionId) => views.refresh(sessionId), dispose };
  };
}
