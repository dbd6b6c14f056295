// The OpenCode plugin: translates OpenCode's hooks into engine calls and nothing more. It never throws into a hook,
// never awaits the client during init (that deadlocks OpenCode), and starts the engine's recovery after init.
import type { Hooks, PluginInput } from "@opencode-ai/plugin";
import { hostname } from "node:os";
import { resolveConfiguration, type Config } from "../config/resolve.js";
import { loadZod } from "../config/zod.js";
import { channelsFrom } from "../notices/sending.js";
import { Announcer } from "./announcer.js";
import { Enforcer } from "../engine/enforcer.js";
import { Modes, type ModeTable } from "../engine/modes.js";
import { describeDatabaseFailure } from "../store/open/failure.js";
import { OpenCodeHost } from "../host/opencode-host.js";
import type { Allowed, Grant } from "../store/changes/allow.js";
import type { EngineStore } from "../store/port.js";
import { isPostgresUrl, redactUrl } from "../store/open/location.js";
import { openStore } from "../store/open/open.js";
import { registerCommands, runCommand } from "./commands.js";
import { CONTINUE_LATER, continueLaterTool } from "./continue-later-tool.js";

/** What other plugins in the same process can call (see README "Programmatic API"). */
export interface TodoContinuationApi {
  markRecovering(sessionID: string): void;
  markRecoveryComplete(sessionID: string): void;
  /** Sets the durable stop; false if it was already set (or the enforcer is off); rejects if it cannot be written. */
  stop(sessionID: string): Promise<boolean>;
  /** Lifts the durable stop; false if it was not set (or the enforcer is off); rejects if it cannot be written. */
  resume(sessionID: string): Promise<boolean>;
  /**
   * More budget for the session (the amounts given, or with none as much again as it had since the last real user
   * message), and a budget stop lifted; `changed: false` for a session never seen (or the enforcer off).
   */
  allow(sessionID: string, grant?: Grant): Promise<Allowed>;
  dispose(): Promise<void>;
}

export type TodoContinuationHooks = Hooks & TodoContinuationApi;

const OFF: TodoContinuationApi = {
  markRecovering: () => undefined,
  markRecoveryComplete: () => undefined,
  stop: async () => false,
  resume: async () => false,
  allow: async () => ({ changed: false, granted: { continuations: 0, cost: 0, tokens: 0 }, lifted: [] }),
  dispose: async () => undefined,
};

async function openOrFallBack(config: Config, announcer: Announcer): Promise<EngineStore | undefined> {
  const options = { busyTimeoutMs: config.busyTimeoutMs };
  try {
    return await openStore(config.databasePath, { ...options, kind: "plugin", lazy: true });
  } catch (error) {
    // A server that is down is waited for (the open is lazy); one that refuses us (credentials, a malformed URL) is
    // a configuration to fix. A memory of our own would continue sessions that the fleet's other processes also
    // continue, so on PostgreSQL the enforcer stays off instead.
    if (isPostgresUrl(config.databasePath)) {
      announcer.off([describeDatabaseFailure(error)], "its database refused it");
      return undefined;
    }
    announcer.inMemory(
      `${describeDatabaseFailure(error)}. Continuing with an in-memory database: enforcement works, but nothing survives a restart of OpenCode.`,
    );
    return await openStore(":memory:", options);
  }
}

/**
 * The plugin function OpenCode calls with its context and the options of the plugin entry. It is also the factory
 * of the programmatic API: the returned object holds the hooks and the API methods. A configuration with a problem
 * keeps the enforcer off (a limit or an agent list it cannot read could make it continue what the person meant to
 * hold back) and says so: in OpenCode's log, in `doctor`, in the TUI, and in a toast at the first idle.
 */
export async function TodoContinuation(
  input: PluginInput,
  options?: Record<string, unknown>,
): Promise<TodoContinuationHooks> {
  const host = new OpenCodeHost(input.client, input.directory);
  const announcer = new Announcer(host, input.directory);
  await loadZod();
  const resolution = resolveConfiguration({ options: options ?? {}, directory: input.directory, files: true });
  announcer.configured(resolution);
  const config = resolution.config;
  if (!config) {
    announcer.off(
      resolution.problems.map((problem) => `invalid configuration: ${problem.text}`),
      "invalid configuration",
    );
    return offHooks(announcer);
  }

  // Said once, resolved: a relative path or `~` in the options lands where this line says.
  host.log("info", `todo-continuation: database ${redactUrl(config.databasePath)}`);
  const store = await openOrFallBack(config, announcer);
  if (!store) return offHooks(announcer);
  return pluginHooks(input, config, store, host, announcer);
}

/** The enforcer off: its API does nothing, and the hooks only let the announcer see OpenCode's config and events. */
function offHooks(announcer: Announcer): TodoContinuationHooks {
  return {
    ...OFF,
    config: (async (cfg: { plugin?: unknown }) => seeConfig(announcer, cfg)) as Hooks["config"],
    event: (({ event }: { event: unknown }) => {
      try {
        announcer.event(event);
      } catch {
        // A toast is never worth an exception in OpenCode's event loop.
      }
    }) as unknown as Hooks["event"],
  } as TodoContinuationHooks;
}

function seeConfig(announcer: Announcer | undefined, cfg: { plugin?: unknown }): void {
  try {
    announcer?.opencodeConfig(cfg);
  } catch {
    // Seeing another enforcer is a courtesy: it never stands in the way of the commands' registration.
  }
}

/** A problem said where the person looks: the announcer's status, log and toast, else OpenCode's log. */
function warn(host: OpenCodeHost, announcer: Announcer | undefined, problem: string): void {
  if (announcer) announcer.warn(problem);
  else host.log("warn", `todo-continuation: ${problem}`);
}

function enforcerOf(
  input: PluginInput,
  config: Config,
  store: EngineStore,
  host: OpenCodeHost,
  announcer: Announcer | undefined,
): Enforcer {
  // On a database that several machines share, the sessions of this OpenCode are those of this host: pods often run
  // OpenCode in the same directory path, and one pod's countdowns must never be adopted by another's OpenCode.
  const server = isPostgresUrl(config.databasePath) ? hostname() : null;
  const noticeChannels = channelsFrom(config.notify, input.directory, (problem) => warn(host, announcer, problem));
  return new Enforcer({ config, store, host, directory: input.directory, server, noticeChannels });
}

/** running ──dispose()──▶ disposing ──▶ disposed: the plugin's engine runs from its hooks' creation on. */
type PluginMode = "running" | "disposing" | "disposed";

const PLUGIN_MODES: ModeTable<PluginMode> = { running: ["disposing"], disposing: ["disposed"], disposed: [] };

/** A dispose() run once, whoever asks and however often: every call resolves once it is over. */
function disposedOnce(work: () => Promise<void>): () => Promise<void> {
  const modes = new Modes<PluginMode>({
    what: "the plugin",
    table: PLUGIN_MODES,
    first: "running",
    stopping: "disposing",
    stopped: "disposed",
  });
  return () => modes.stop(work);
}

/** The hooks over an open store: what the plugin function returns once its configuration and file are settled. */
export function pluginHooks(
  input: PluginInput,
  config: Config,
  store: EngineStore,
  host = new OpenCodeHost(input.client, input.directory),
  announcer?: Announcer,
): TodoContinuationHooks {
  const enforcer = enforcerOf(input, config, store, host, announcer);
  // Told by the engine, not by a wrapper around the event hook: that hook runs for every streamed chunk.
  if (announcer) enforcer.on("session_idle", () => announcer.idle());
  // Recovery reads OpenCode (pending injections are reconciled against the session's messages): after init only.
  const startTimer = setTimeout(() => {
    enforcer
      .start()
      .catch((error: unknown) =>
        host.log("error", `todo-continuation could not start: ${describeDatabaseFailure(error)}`),
      );
  }, 0);

  const guard =
    <A extends unknown[]>(what: string, work: (...args: A) => void | Promise<void>) =>
    async (...args: A): Promise<void> => {
      try {
        await work(...args);
      } catch (error) {
        host.log("error", `todo-continuation ${what} failed: ${describeDatabaseFailure(error)}`);
      }
    };

  // Its engine stopped, then its store closed.
  const dispose = disposedOnce(async () => {
    clearTimeout(startTimer);
    await enforcer.dispose();
    try {
      await store.close();
    } catch {
      // Closing a file that is already gone must not break OpenCode's shutdown.
    }
  });

  return {
    // Called by OpenCode for every bus event, not awaited: a plain function that returns at once.
    event: (({ event }: { event: unknown }) => {
      enforcer.handleEvent(event);
    }) as unknown as Hooks["event"],
    "tool.execute.before": guard("tool hook", (toolInput: { sessionID?: string }) =>
      enforcer.toolActivity(toolInput?.sessionID, "before"),
    ),
    "tool.execute.after": guard("tool hook", (toolInput: { sessionID?: string }) =>
      enforcer.toolActivity(toolInput?.sessionID, "after"),
    ),
    config: guard("config hook", (cfg: { command?: Record<string, unknown>; plugin?: unknown }) => {
      seeConfig(announcer, cfg);
      registerCommands(cfg);
    }) as Hooks["config"],
    "command.execute.before": guard(
      "command",
      async (commandInput: { command: string; sessionID: string }, output: { parts: unknown[] }) => {
        const note = await runCommand(enforcer, commandInput.command, commandInput.sessionID);
        if (note === undefined) return;
        // OpenCode keeps its own reference to this array: edit it in place.
        const text = output.parts.find(
          (p): p is { type: "text"; text: string } => (p as { type?: string })?.type === "text",
        );
        if (text) text.text = note;
      },
    ),
    tool: {
      [CONTINUE_LATER]: continueLaterTool((sessionId, args, agent) => enforcer.continueLater(sessionId, args, agent)),
    },
    dispose,
    markRecovering: (sessionID) => enforcer.markRecovering(sessionID),
    markRecoveryComplete: (sessionID) => enforcer.markRecoveryComplete(sessionID),
    stop: (sessionID) => enforcer.stop(sessionID, "api"),
    resume: (sessionID) => enforcer.resume(sessionID, "api"),
    allow: (sessionID, grant) => enforcer.allow(sessionID, grant, "api"),
  };
}
