// The TUI side: a panel in the session sidebar, a key that cancels the running countdown, and palette entries that
// stop and resume continuation without a model turn. It reads and writes the same SQLite file as the server plugin:
// a cancel or a stop is a row, which the server side obeys at its next tick, at the deadline and before the prompt
// (so it holds across a restart and whatever the timing). It decides nothing itself and never throws into the TUI:
// a missing or broken database is one line in the panel.
import { ConfigError } from "../config.js";
import { cancelByKey } from "../store/changes/cancel-by-key.js";
import { resume as resumeChange } from "../store/changes/resume.js";
import { stop as stopChange } from "../store/changes/stop.js";
import { openStore } from "../store/open.js";
import type { OperatorStore } from "../store/operator.js";
import { sessionView, type SessionView } from "../store/queries.js";
import type { SessionScope } from "../store/port.js";
import { q } from "../store/script.js";
import type { PanelRenderer, TuiApi, TuiKeyEvent } from "./host-api.js";
import { keyLabel, resolveTuiOptions, type TuiOptions } from "./options.js";
import { panelLines, type PanelLine } from "./panel.js";

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
/** A refresh right after an event, and one more once the server's decision (after it read OpenCode) is written. */
const REFRESH_DELAYS_MS = [100, 1200];
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

function oneLine(error: unknown): string {
  const text = error instanceof ConfigError ? error.message : error instanceof Error ? error.message : String(error);
  const line = text.split("\n")[0]!;
  return line.length > 120 ? `${line.slice(0, 120)}…` : line;
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
    const changes = store;
    const cancelKey = options?.cancelKey ?? "escape";
    const views = new Map<string, SessionView>();
    const [version, setVersion] = renderer.signal(0);
    const [now, setNow] = renderer.signal(Date.now());
    const timers = new Set<ReturnType<typeof setTimeout>>();
    let clock: ReturnType<typeof setInterval> | undefined;
    let disposed = false;

    const failed = (what: string, error: unknown) => {
      problem = `${what}: ${oneLine(error)}`;
      setVersion(version() + 1);
      return undefined;
    };
    const guardedChange = async <T>(what: string, work: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await work();
      } catch (error) {
        return failed(what, error);
      }
    };

    /** The seconds of a countdown move on a UI clock, not by reading the database again. */
    const keepTime = () => {
      const counting = [...views.values()].some((v) => v.countdown !== null);
      if (counting && !clock) clock = setInterval(() => setNow(Date.now()), 1000);
      if (!counting && clock) {
        clearInterval(clock);
        clock = undefined;
      }
    };

    const refresh = async (sessionId: string) => {
      if (disposed || !store) return;
      const view = await guardedChange("reading the database", () => sessionView(store!.reader, sessionId));
      if (!view || disposed) return;
      problem = undefined;
      views.set(sessionId, view);
      setNow(Date.now());
      setVersion(version() + 1);
      keepTime();
    };

    const refreshSoon = (sessionId: string) => {
      for (const delay of REFRESH_DELAYS_MS) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          void refresh(sessionId);
        }, delay);
        timers.add(timer);
      }
    };

    const inView = (): string | undefined => {
      const route = api.route.current;
      const id = route.name === "session" ? route.params?.sessionID : undefined;
      return typeof id === "string" ? id : undefined;
    };

    const scope = async (sessionId: string): Promise<SessionScope> => {
      const known = await changes?.read(q.session(sessionId));
      return { sessionId, directory: known?.directory ?? api.state.path.directory, server: known?.server ?? null };
    };

    const say = (message: string, variant: "info" | "success" | "warning" = "info") => {
      try {
        api.ui.toast({ variant, title: "Todo continuation", message, duration: 3000 });
      } catch {
        // A toast is a courtesy; the panel shows the state anyway.
      }
    };

    /** Ends the running countdown of the session in view, if there is one; quiet when there is none. */
    const cancelCountdown = async (via: string, announceNone: boolean) => {
      const sessionId = inView();
      if (!sessionId || !changes) return;
      const ended = await guardedChange("cancelling", async () =>
        changes.change(cancelByKey(await scope(sessionId), Date.now(), { source: "tui", via })),
      );
      if (ended) say("Countdown cancelled: nothing will be sent.", "success");
      else if (announceNone) say("No countdown is running in this session.");
      await refresh(sessionId);
    };

    const stop = async () => {
      const sessionId = inView();
      if (!sessionId || !changes) return say("Open a session first.");
      const result = await guardedChange("stopping", async () =>
        changes.change(stopChange(await scope(sessionId), "tui", Date.now())),
      );
      if (result)
        say(
          result.changed ? "Stopped for this session, also after restarts, until resumed." : "Already stopped.",
          "success",
        );
      await refresh(sessionId);
    };

    const resume = async () => {
      const sessionId = inView();
      if (!sessionId || !changes) return say("Open a session first.");
      // The enforcer looks at the session again within a lease tick, as after the CLI's resume (changes/resume.ts).
      const changed = await guardedChange("resuming", async () =>
        changes.change(resumeChange(await scope(sessionId), "tui", Date.now())),
      );
      if (changed !== undefined)
        say(
          changed
            ? "Resumed: it continues within a few seconds if todos are open."
            : "Nothing to resume: it was neither stopped nor paused.",
          "success",
        );
      await refresh(sessionId);
    };

    const unsubscribes: Array<() => void> = [];
    try {
      api.keymap.registerLayer({
        commands: [
          {
            namespace: "palette",
            name: COMMANDS.cancel,
            title: "Cancel the continuation countdown",
            desc: "Nothing is sent; the next idle starts a new one",
            category: "Todo continuation",
            run: () => void cancelCountdown("palette", true),
          },
          {
            namespace: "palette",
            name: COMMANDS.stop,
            title: "Stop todo continuation",
            desc: "For this session, across restarts, until resumed; no model turn",
            category: "Todo continuation",
            run: () => void stop(),
          },
          {
            namespace: "palette",
            name: COMMANDS.resume,
            title: "Resume todo continuation",
            desc: "Lift a stop or a pause and start the counts over",
            category: "Todo continuation",
            run: () => void resume(),
          },
        ],
        // Escape is watched, never bound: OpenCode keeps every use it has for it (closing dialogs, interrupting).
        bindings:
          cancelKey === "escape"
            ? []
            : [{ key: cancelKey, cmd: COMMANDS.cancel, desc: "Cancel the continuation countdown" }],
      });
      api.keymap.intercept("key", ({ event }) => {
        if (event.name === "escape" && cancelKey === "escape") return void cancelCountdown("escape", false);
        const sessionId = inView();
        if (options?.cancelOnTyping && sessionId && views.get(sessionId)?.countdown && isTyping(event))
          void cancelCountdown("typing", false);
      });
      for (const type of REFRESH_ON) {
        unsubscribes.push(
          api.event.on(type, (event) => {
            const sessionId = sessionOf(event.properties);
            for (const viewed of views.keys()) if (!sessionId || sessionId === viewed) refreshSoon(viewed);
          }),
        );
      }
      api.slots.register({
        order: 450,
        slots: {
          sidebar_content(ctx, props) {
            const lines = (): PanelLine[] => {
              version();
              const sessionId = props.session_id;
              if (!views.has(sessionId) && !problem) queueMicrotask(() => void refresh(sessionId));
              const view = problem ? { problem } : views.get(sessionId);
              return view ? panelLines({ view, now: now(), cancelKey: keyLabel(cancelKey) }) : [];
            };
            return renderer.panel(ctx.theme, lines);
          },
        },
      });
    } catch (error) {
      problem = `the TUI refused a registration: ${oneLine(error)}`;
    }

    const dispose = () => {
      if (disposed) return;
      disposed = true;
      for (const timer of timers) clearTimeout(timer);
      if (clock) clearInterval(clock);
      for (const unsubscribe of unsubscribes) unsubscribe();
      try {
        store?.close();
      } catch {
        // Closing a file that is already gone must not break OpenCode's exit.
      }
    };
    api.lifecycle.onDispose(dispose);
    return { refresh, dispose };
  };
}
