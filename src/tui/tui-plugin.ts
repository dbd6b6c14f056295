// The TUI side: a panel in the session sidebar, the countdown beside the prompt where no sidebar is drawn, the key and
// typing that cancel a running countdown, and palette entries that stop, resume and allow more continuation without a
// model turn.
// It reads and writes the same database as the server plugin: a cancel or a stop is a row, which the server side
// obeys at its next tick, at the deadline and before the prompt (so it holds across a restart and whatever the
// timing). It decides nothing itself and never throws into the TUI: a missing or broken database is one line in the
// panel. It opens the database when first needed, not while OpenCode starts (tui-store.ts).
import type { PanelRenderer, TuiApi, TuiKeyEvent } from "./host-api.js";
import { Controls } from "./controls.js";
import { loadZod } from "../config/zod.js";
import { keyLabel, resolveTuiOptions, somethingToCheck, type TuiOptions } from "./options.js";
import { panelLines, promptLine, type PanelInput } from "./panel.js";
import { PluginNews } from "./plugin-news.js";
import { SessionViews } from "./session-views.js";
import { oneLine, TuiStore } from "./tui-store.js";

/** Events after which what is drawn may have changed (the server decides a few milliseconds later). */
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

const COMMANDS = {
  cancel: "todo-continuation.cancel",
  stop: "todo-continuation.stop",
  resume: "todo-continuation.resume",
  allow: "todo-continuation.allow",
  wake: "todo-continuation.wake",
};

/** The palette's entries: a title and a description that fit its row (about 52 columns) together. */
export const PALETTE = {
  cancel: { title: "Cancel continuation countdown", desc: "Nothing sent" },
  stop: { title: "Stop todo continuation", desc: "Until you resume it" },
  resume: { title: "Resume todo continuation", desc: "Lift a stop or a pause" },
  allow: { title: "Allow more todo continuations", desc: "As much again" },
  wake: { title: "Wake parked todo continuation", desc: "Continue now" },
} as const;

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
  /** Reads the session's state again now (what is drawn updates). */
  refresh(sessionId: string): Promise<void>;
  dispose(): Promise<void>;
}

interface Parts {
  api: TuiApi;
  renderer: PanelRenderer;
  options: TuiOptions | undefined;
  views: SessionViews;
  controls: Controls;
  cancelKey: string;
}

/** The palette entries, and the cancel key bound when it is not Escape (which is watched, never bound). */
function registerCommands({ api, controls, cancelKey }: Parts): void {
  const entry = (name: string, words: { title: string; desc: string }, run: () => void) => ({
    namespace: "palette" as const,
    name,
    ...words,
    category: "Todo continuation",
    run,
  });
  api.keymap.registerLayer({
    commands: [
      entry(COMMANDS.cancel, PALETTE.cancel, () => void controls.cancel("palette", true)),
      entry(COMMANDS.stop, PALETTE.stop, () => void controls.stop()),
      entry(COMMANDS.resume, PALETTE.resume, () => void controls.resume()),
      entry(COMMANDS.allow, PALETTE.allow, () => void controls.allowMore()),
      entry(COMMANDS.wake, PALETTE.wake, () => void controls.wakeNow()),
    ],
    // Escape is watched, never bound: OpenCode keeps every use it has for it (closing dialogs, interrupting).
    bindings: cancelKey === "escape" ? [] : [{ key: cancelKey, cmd: COMMANDS.cancel, desc: PALETTE.cancel.title }],
  });
}

/**
 * The key and typing cancel the running countdown of the session in view: watched before OpenCode handles the key,
 * never consumed. Only keys that reach the session's prompt count: with the palette or any dialog open, a key (and the
 * Esc that closes it) is the dialog's.
 */
function watchKeys({ api, options, controls, cancelKey }: Parts): void {
  api.keymap.intercept("key", ({ event }) => {
    if (api.ui.dialog?.open) return;
    if (event.name === "escape" && cancelKey === "escape") return void controls.keyed("escape");
    if (options?.cancelOnTyping && isTyping(event)) void controls.keyed("typing");
  });
}

/**
 * Where the session's state is drawn: the panel in the sidebar (OpenCode draws it above 120 columns, unless hidden),
 * and beside the prompt the countdown while no panel is on screen, so that one countdown shows at every width.
 */
function registerSlots({ api, renderer, views, cancelKey }: Parts): void {
  const input = (sessionId: string): PanelInput | undefined => {
    views.version();
    if (!views.views.has(sessionId) && !views.problem) queueMicrotask(() => void views.refresh(sessionId));
    const view = views.problem ? { problem: views.problem } : views.views.get(sessionId);
    return view && { view, now: views.now(), cancelKey: keyLabel(cancelKey), notice: views.notice };
  };
  api.slots.register({
    order: 450,
    slots: {
      sidebar_content(ctx, props) {
        views.panelShown();
        renderer.onCleanup(() => views.panelGone());
        return renderer.panel(ctx.theme, () => {
          const shown = input(props.session_id);
          return shown ? panelLines(shown) : [];
        });
      },
      session_prompt_right(ctx, props) {
        return renderer.line(ctx.theme, () => {
          const shown = input(props.session_id);
          return shown && views.panels() === 0 ? promptLine(shown) : undefined;
        });
      },
    },
  });
}

/** The TUI plugin function, drawing with `renderer` (OpenCode's Solid renderer; a recorder in tests). */
export function createTuiPlugin(renderer: PanelRenderer) {
  return async function tui(api: TuiApi, rawOptions?: unknown): Promise<TuiPluginHandle> {
    let options: TuiOptions | undefined;
    let problem: string | undefined;
    try {
      if (somethingToCheck(rawOptions, api.state.path.directory)) await loadZod();
      options = resolveTuiOptions(rawOptions ?? {}, process.env, api.state.path.directory, true);
    } catch (error) {
      problem = oneLine(error);
    }
    let views: SessionViews | undefined;
    const store = options && new TuiStore(options.databasePath, api.state.path.directory, (p) => views?.report(p));
    views = new SessionViews(renderer, store, problem);
    const news = new PluginNews(api, views, api.state.path.directory);
    if (problem) news.ownProblem(problem);
    news.start();
    const parts: Parts = {
      api,
      renderer,
      options,
      views,
      controls: new Controls(api, store, views),
      cancelKey: options?.cancelKey ?? "escape",
    };
    const unsubscribes: Array<() => void> = [];
    try {
      registerCommands(parts);
      watchKeys(parts);
      for (const type of REFRESH_ON)
        unsubscribes.push(
          api.event.on(type, (event) => {
            news.look();
            views.refreshSoon(sessionOf(event.properties));
          }),
        );
      registerSlots(parts);
    } catch (error) {
      views.report(`the TUI refused a registration: ${oneLine(error)}`);
    }
    let disposing: Promise<void> | undefined;
    const dispose = () =>
      (disposing ??= (async () => {
        views.dispose();
        news.dispose();
        for (const unsubscribe of unsubscribes) unsubscribe();
        await store?.dispose();
      })());
    api.lifecycle.onDispose(dispose);
    return { refresh: (sessionId) => views.refresh(sessionId), dispose };
  };
}
