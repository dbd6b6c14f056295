// OpenCode's own TUI (`opencode --port P`: the TUI with its server in a worker) run in tmux, isolated and offline like
// the e2e server, with the server plugin in opencode.json and the TUI plugin in tui.json, besides what every world has
// (world.ts: the folder, the scripted model, the plugin's database). Tests type and press keys with `send-keys` and
// assert on what `capture-pane` shows.
import { afterAll, beforeAll, beforeEach } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { opencodeBinary, ROOT } from "../../crash/processes.js";
import { sleep, waitFor } from "../../support/wait-for.js";
import { homeFolders, OFFLINE, opencodeConfig, PLUGIN_ENTRY, seedConfigFolder } from "./opencode-server.js";
import type { Script } from "./scripted-model.js";
import { freePort } from "./tcp-proxy.js";
import { World, type Owed } from "./world.js";

export const TUI_ENTRY = join(ROOT, "src", "tui", "index.ts");

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const socketName = () => `tc-tui-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
/** The open palette's header row: its title and, at the far right, "esc" (the status bar says "ctrl+p commands"). */
const PALETTE_HEADER = /Commands\s+esc/;

export interface TuiWorldOptions {
  /** Server plugin options (opencode.json). */
  server?: Record<string, unknown>;
  /** TUI plugin options (tui.json). */
  tui?: Record<string, unknown>;
  /** The TUI plugin spec: this checkout's entry by default; `false` lists no TUI plugin in tui.json. */
  tuiSpec?: string | false;
  /**
   * The server plugin spec: this checkout's entry by default; `false` lists none in the generated config (a test's own
   * opencode.json in the config folder names it).
   */
  serverSpec?: string | false;
  /**
   * `false`: leave OpenCode's global config folder (`configDir`) as the test made it, unseeded (OpenCode then
   * npm-installs @opencode-ai/plugin into it itself, next to whatever is there).
   */
  seed?: boolean;
  /** More environment for OpenCode (npm settings for its installer). */
  env?: Record<string, string>;
  /** Called once the folders exist, before OpenCode starts (to seed its package cache). */
  prepare?: (home: string) => void;
  /** The terminal's size in columns and rows: 160×45 by default. */
  size?: { columns: number; rows: number };
  /** How often `waitScreen` looks at the screen: every 30 ms by default (toasts last seconds). */
  pollMs?: number;
  /** The scripted model's price ($ per million tokens): OpenCode then computes what each step cost. */
  modelCost?: { input: number; output: number; cache_read?: number; cache_write?: number };
}

export class TuiWorld extends World {
  readonly project = join(this.root, "project");
  readonly dbPath = join(this.root, "todo-continuation.db");
  /** A tmux server of our own, so nothing else on the machine is touched. */
  private socket = socketName();
  private socketPath: string | undefined;
  private pid: number | undefined;
  private modelUrl: string | undefined;
  /** Milliseconds from tmux's new-session to the first screen showing OpenCode's prompt, in the last `start`. */
  startupMs: number | undefined;

  constructor(
    script: Script,
    private readonly options: TuiWorldOptions = {},
  ) {
    super("tc-tui-", script);
  }

  /** Starts OpenCode's TUI; again after `quit`, on the same folders (a warm start). */
  async start(timeoutMs = 45_000): Promise<void> {
    const dirs = homeFolders(this.root);
    mkdirSync(this.project, { recursive: true });
    const configDir = this.configDir;
    if (this.options.seed !== false) seedConfigFolder(configDir);
    this.options.prepare?.(dirs.HOME);
    const tuiSpec = this.options.tuiSpec ?? pathToFileURL(TUI_ENTRY).href;
    writeFileSync(
      join(configDir, "tui.json"),
      JSON.stringify(
        {
          $schema: "https://opencode.ai/tui.json",
          plugin: tuiSpec === false ? [] : [[tuiSpec, { databasePath: this.dbPath, ...this.options.tui }]],
        },
        null,
        2,
      ),
    );
    const modelUrl = (this.modelUrl ??= await this.model.start());
    const serverSpec = this.options.serverSpec ?? pathToFileURL(PLUGIN_ENTRY).href;
    const plugin =
      serverSpec === false ? undefined : [[serverSpec, { databasePath: this.dbPath, ...this.options.server }]];
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      ...dirs,
      ...OFFLINE,
      TERM: "tmux-256color",
      LANG: "C.UTF-8",
      OPENCODE_CONFIG_CONTENT: opencodeConfig(modelUrl, plugin, {}, this.options.modelCost),
      ...this.options.env,
    };
    // A port the system says is free now (a fixed range can collide with other tests' listening sockets).
    const port = await freePort();
    const run = join(this.root, "run.sh");
    const exports = Object.entries(env)
      .map(([k, v]) => `export ${k}=${quote(v)}`)
      .join("\n");
    writeFileSync(
      run,
      `#!/bin/sh\n${exports}\ncd ${quote(this.project)}\nexec ${quote(opencodeBinary())} --port ${port} --hostname 127.0.0.1 2>${quote(join(this.root, "tui-stderr.log"))}\n`,
      { mode: 0o755 },
    );
    const conf = join(this.root, "tmux.conf");
    writeFileSync(conf, "set -g escape-time 0\nset -g default-terminal tmux-256color\n");
    const { columns, rows } = this.options.size ?? { columns: 160, rows: 45 };
    this.startupMs = undefined;
    const started = performance.now();
    this.tmux(
      "-f",
      conf,
      "new-session",
      "-d",
      "-s",
      "tui",
      "-x",
      String(columns),
      "-y",
      String(rows),
      `env -i /bin/sh ${quote(run)}`,
    );
    const [pid, ...socketPath] = this.tmux("display", "-p", "-t", "tui", "#{pane_pid} #{socket_path}")
      .trim()
      .split(" ");
    this.pid = Number(pid);
    this.socketPath = socketPath.join(" ");
    try {
      await this.waitScreen("OpenCode's prompt", (s) => s.includes("Ask anything"), timeoutMs);
      this.startupMs = performance.now() - started;
    } catch (error) {
      const stderr = join(this.root, "tui-stderr.log");
      throw new Error(
        `${(error as Error).message}\nOpenCode's stderr:\n${existsSync(stderr) ? readFileSync(stderr, "utf8").slice(-3000) : "(none)"}`,
      );
    }
  }

  /** OpenCode's global config folder (`$XDG_CONFIG_HOME/opencode`), where tui.json is written. */
  get configDir(): string {
    return join(this.root, "home", "config", "opencode");
  }

  /** The folder OpenCode installs npm plugins into. */
  get packages(): string {
    return join(this.root, "home", "cache", "opencode", "packages");
  }

  protected async stopRunning(): Promise<void> {
    await this.quit();
  }

  /** Ends OpenCode and its tmux server, keeping the folders and the model for another `start`. */
  async quit(): Promise<void> {
    try {
      this.keys("C-u");
      await sleep(100);
      this.keys("C-c");
    } catch {
      // Already gone.
    }
    const exited = await waitFor("OpenCode to exit", () => !this.alive(), { timeoutMs: 3000, interval: 100 }).then(
      () => true,
      () => false,
    );
    if (!exited) this.signal("SIGKILL");
    try {
      this.tmux("kill-server");
    } catch {
      // No server left.
    }
    this.pid = undefined;
    // tmux leaves its socket file behind. kill-server returns before the server has gone: a next start on the same
    // socket could reach the dying one, so the next start has a socket of its own.
    if (this.socketPath) rmSync(this.socketPath, { force: true });
    this.socketPath = undefined;
    this.socket = socketName();
  }

  screen(): string {
    return this.tmux("capture-pane", "-p", "-t", "tui");
  }

  /** Types text into the focused input, as a person would. */
  type(text: string): void {
    this.tmux("send-keys", "-t", "tui", "-l", text);
  }

  keys(...keys: string[]): void {
    this.tmux("send-keys", "-t", "tui", ...keys);
  }

  /** Sends a message from the prompt box: Enter once the box shows the typed text (the TUI has taken it). */
  async say(text: string): Promise<void> {
    const shown = (screen: string) => screen.split(text).length - 1;
    const before = shown(this.screen());
    this.type(text);
    await this.waitScreen(`"${text}" typed into the prompt box`, (s) => shown(s) > before, 5000);
    this.keys("Enter");
  }

  /** Runs a command of the palette (ctrl+p), picked by typing its title. */
  async palette(title: string): Promise<void> {
    await this.searchPalette(title);
    this.keys("Enter");
  }

  /** Opens the command palette (ctrl+p) and types `search` into its search box. */
  async searchPalette(search: string): Promise<void> {
    // The palette's header is "Commands … esc"; the status bar's "ctrl+p commands" is always on screen,
    // so a case-blind match passed before the palette opened and the title was typed into nothing (CI
    // saw the palette open with an empty search). Its search box may also lag its frame under load: a
    // person would see the empty search and type again, so the driver does too, at most three times.
    for (let attempt = 1; ; attempt++) {
      this.keys("C-p");
      await this.waitScreen("the command palette", (s) => PALETTE_HEADER.test(s), 5000);
      await sleep(200);
      this.type(search);
      try {
        await this.waitScreen(`"${search}" in the palette`, (s) => s.includes(search), 5000);
        return;
      } catch (error) {
        if (attempt === 3) throw error;
        this.keys("Escape");
        await this.waitScreen("the palette closed", (s) => !PALETTE_HEADER.test(s), 5000);
      }
    }
  }

  /** Polls the screen every `pollMs` (toasts last seconds; a countdown second is short). */
  async waitScreen(what: string, matches: (screen: string) => boolean, timeoutMs = 20_000): Promise<string> {
    let screen = "";
    return waitFor(
      what,
      () => {
        screen = this.screen();
        return matches(screen) && screen;
      },
      { timeoutMs, interval: this.options.pollMs ?? 30, report: () => `the screen:\n${screen}` },
    );
  }

  /**
   * Resolves once nothing is armed, pending or owed for the session in the file and its last decision is one of
   * `closing`, deferrals aside (OpenCode may load the server plugin twice in TUI mode; the second defers to the first):
   * no enforcer can send anything for it without a new event. OpenCode's own state is not asked (the TUI's server has
   * no client here), unlike `E2E.trailAtRest`.
   */
  async waitForNothingOwed(sessionId: string, closing: string[], timeoutMs = 20_000): Promise<void> {
    let state: Owed | undefined;
    await this.waitFor(
      () => `the enforcer at rest after ${closing.join(" or ")} (now ${JSON.stringify(state)})`,
      () => {
        state = this.owed(sessionId, true);
        return state.armed === 0 && state.pending === 0 && state.recheckAt === null && closing.includes(state.last!);
      },
      timeoutMs,
    );
  }

  /** What the database and OpenCode's log say, for a failing test's report. */
  diagnose(): string {
    const table = (sql: string) =>
      existsSync(this.dbPath) ? this.rows<Record<string, unknown>>(sql).map((r) => JSON.stringify(r)) : [];
    const logDir = join(this.root, "home", "data", "opencode", "log");
    const logs = existsSync(logDir)
      ? readdirSync(logDir).map((f) =>
          readFileSync(join(logDir, f), "utf8")
            .split("\n")
            .filter((l) => l.includes("todo-continuation"))
            .slice(-60)
            .join("\n"),
        )
      : [];
    return [
      "audit_events:",
      ...table("SELECT id, at, session_id, event, reason, detail FROM audit_events ORDER BY id"),
      "countdowns:",
      ...table("SELECT id, state, end_reason, owner, armed_at, deadline_at FROM countdowns ORDER BY armed_at"),
      "injections:",
      ...table("SELECT id, status, created_at, owner FROM injections ORDER BY created_at"),
      "OpenCode's log (todo-continuation lines):",
      ...logs,
    ].join("\n");
  }

  /** The session the TUI created last (for the first message, its only one, until `/new`). */
  sessionId(): string | undefined {
    return this.rows<{ session_id: string }>("SELECT session_id FROM sessions ORDER BY created_at DESC LIMIT 1")[0]
      ?.session_id;
  }

  private tmux(...args: string[]): string {
    // stderr goes into a failure's message, not onto the console ("no server running" after a quit).
    return execFileSync("tmux", ["-L", this.socket, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  }

  private alive(): boolean {
    if (!this.pid) return false;
    try {
      process.kill(this.pid, 0);
      return !execFileSync("ps", ["-o", "stat=", "-p", String(this.pid)], { encoding: "utf8" })
        .trim()
        .startsWith("Z");
    } catch {
      return false;
    }
  }

  private signal(signal: NodeJS.Signals): void {
    try {
      if (this.pid) process.kill(this.pid, signal);
    } catch {
      // Gone meanwhile.
    }
  }
}

/**
 * How long a fresh TUI's first turn may take to show its countdown: OpenCode loads the provider's module and more on
 * its first prompt, and beside a second TUI and a fleet's servers that took over 30 s.
 */
export const FIRST_TURN_MS = 60_000;

/**
 * The suite's life of `world`: started before its tests (then `setUp`, if any), stopped after them, and its
 * diagnosis printed for any test that fails.
 */
export function useTuiWorld(world: TuiWorld, options: { startTimeoutMs: number; setUp?: () => Promise<void> }): void {
  beforeAll(async () => {
    // The hook's own patience less a margin for `setUp`: a TUI beside another and a fleet's servers took over 45 s.
    await world.start(Math.max(45_000, options.startTimeoutMs - 15_000));
    await options.setUp?.();
  }, options.startTimeoutMs);
  afterAll(async () => {
    await world.stop();
  });
  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => console.error(world.diagnose()));
  });
}
