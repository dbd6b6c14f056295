// A real `opencode serve` (the binary of the opencode-ai devDependency) isolated in a temp HOME/XDG, offline, with
// the scripted model as its only provider and this plugin loaded from the working tree. Stopped by its own pid.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createOpencodeClient, type OpencodeClient } from "@opencode-ai/sdk";
import { opencodeBinary, ROOT } from "../../crash/processes.js";
import { waitFor } from "../../support/wait-for.js";

export const PLUGIN_ENTRY = join(ROOT, "src", "index.ts");

/** With these, OpenCode's only outbound connection is to the scripted model. */
export const OFFLINE = {
  OPENCODE_DISABLE_MODELS_FETCH: "1",
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  OPENCODE_DISABLE_SHARE: "1",
  OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
  OPENCODE_DISABLE_CLAUDE_CODE: "1",
  OPENCODE_DISABLE_EXTERNAL_SKILLS: "1",
  OPENCODE_DISABLE_EMBEDDED_WEB_UI: "1",
  OPENCODE_DISABLE_AUTOCOMPACT: "1",
};

export interface ServerOptions {
  /** Folder holding home/, project/ and the plugin database; reused across restarts. */
  root: string;
  modelUrl: string;
  /** Plugin options; `false` loads no plugin at all. */
  pluginOptions: Record<string, unknown> | false;
  /** The plugin spec: a file:// URL of the working tree's entry by default, or an npm name. */
  pluginSpec?: string;
  env?: Record<string, string>;
  /** A fixed port (0: any free one). */
  port?: number;
  /** Turns on the server's basic auth (OPENCODE_SERVER_PASSWORD); the test client then sends it. */
  password?: string;
  /** More configuration (agents, …), merged into the generated opencode.json. */
  config?: Record<string, unknown>;
  /** The project folder (default: root/project). Servers with their own homes may share one, as pods share a path. */
  project?: string;
  /** The level of OpenCode's own log on stderr (default INFO); a test with many servers and sessions keeps warnings. */
  logLevel?: "DEBUG" | "INFO" | "WARN" | "ERROR";
  /**
   * Run OpenCode as this (unprivileged) user, owning its home and project: for root, file permissions stop nothing.
   * Starting fails, rather than running as root, when this process may not switch users.
   */
  user?: { uid: number; gid: number };
  /** The opencode binary to run (default: the opencode-ai devDependency's); `user` must be able to run it. */
  binary?: string;
  /** Make the project a git repository with one commit first: OpenCode takes snapshots only in one. */
  git?: boolean;
  /** The scripted model's price ($ per million tokens), from which OpenCode computes each step's cost. */
  modelCost?: { input: number; output: number; cache_read?: number; cache_write?: number };
  /**
   * `false`: leave OpenCode's global config folder as the test made it, unseeded (OpenCode then npm-installs
   * @opencode-ai/plugin into it itself, next to whatever is there).
   */
  seed?: boolean;
}

/**
 * OpenCode's home and XDG folders under `root`, made: nothing of the machine's own configuration, data or cache is
 * read or written.
 */
export function homeFolders(root: string) {
  const home = join(root, "home");
  const dirs = {
    HOME: home,
    XDG_DATA_HOME: join(home, "data"),
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_CACHE_HOME: join(home, "cache"),
    XDG_STATE_HOME: join(home, "state"),
    // The opencode binary (Bun) unpacks a 14 MB native library into the temporary folder at every start and leaves
    // it there: in the world's folder, it goes when the world does.
    TMPDIR: join(root, "tmp"),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  return dirs;
}

/** `path` and everything under it, owned by `user`. */
function chownTree(path: string, user: { uid: number; gid: number }): void {
  chownSync(path, user.uid, user.gid);
  for (const entry of readdirSync(path, { withFileTypes: true }))
    if (entry.isDirectory()) chownTree(join(path, entry.name), user);
    else chownSync(join(path, entry.name), user.uid, user.gid);
}

function initRepository(project: string): void {
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=e2e", "-c", "user.email=e2e@localhost", ...args], { cwd: project });
  git("init", "-q");
  git("commit", "-q", "--allow-empty", "-m", "init");
}

export function opencodeConfig(
  modelUrl: string,
  plugin: unknown[] | undefined,
  extra: Record<string, unknown> = {},
  cost?: ServerOptions["modelCost"],
): string {
  const limit = { context: 100_000, output: 4_000 };
  return JSON.stringify({
    $schema: "https://opencode.ai/config.json",
    model: "scripted/model-1",
    small_model: "scripted/model-1",
    enabled_providers: ["scripted"],
    provider: {
      scripted: {
        npm: "@ai-sdk/openai-compatible",
        name: "Scripted",
        options: { baseURL: modelUrl, apiKey: "x" },
        models: { "model-1": { name: "Scripted model", tool_call: true, limit, ...(cost ? { cost } : {}) } },
      },
    },
    permission: { "*": "allow" },
    snapshot: false,
    lsp: false,
    formatter: false,
    share: "disabled",
    autoupdate: false,
    ...(plugin ? { plugin } : {}),
    ...extra,
  });
}

/** Lets OpenCode skip its 3–6 s npm install of @opencode-ai/plugin into the config folder. */
export function seedConfigFolder(configDir: string): void {
  mkdirSync(join(configDir, "node_modules"), { recursive: true });
  const dependencies = { "@opencode-ai/plugin": "1.18.33" };
  writeFileSync(join(configDir, "package.json"), JSON.stringify({ dependencies }));
  writeFileSync(
    join(configDir, "package-lock.json"),
    JSON.stringify({ lockfileVersion: 3, packages: { "": { dependencies } } }),
  );
}

export class OpenCodeServer {
  url = "";
  client!: OpencodeClient;
  readonly project: string;
  private child: ChildProcess | undefined;
  private log = "";

  constructor(private readonly options: ServerOptions) {
    this.project = options.project ?? join(options.root, "project");
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  output(): string {
    return this.log;
  }

  async start(timeoutMs = 30_000): Promise<void> {
    const { root } = this.options;
    const dirs = homeFolders(root);
    mkdirSync(this.project, { recursive: true });
    if (this.options.seed !== false) seedConfigFolder(join(dirs.XDG_CONFIG_HOME, "opencode"));
    if (this.options.git && !existsSync(join(this.project, ".git"))) initRepository(this.project);
    if (this.options.user) for (const dir of [root, this.project]) chownTree(dir, this.options.user);
    const plugin =
      this.options.pluginOptions === false
        ? undefined
        : [[this.options.pluginSpec ?? pathToFileURL(PLUGIN_ENTRY).href, this.options.pluginOptions]];
    this.log = "";
    this.child = spawn(
      this.options.binary ?? opencodeBinary(),
      [
        "serve",
        "--hostname",
        "127.0.0.1",
        "--port",
        String(this.options.port ?? 0),
        "--print-logs",
        ...(this.options.logLevel ? ["--log-level", this.options.logLevel] : []),
      ],
      {
        cwd: this.project,
        detached: true,
        ...this.options.user,
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          ...dirs,
          ...OFFLINE,
          OPENCODE_CONFIG_CONTENT: opencodeConfig(
            this.options.modelUrl,
            plugin,
            this.options.config,
            this.options.modelCost,
          ),
          ...(this.options.password ? { OPENCODE_SERVER_PASSWORD: this.options.password } : {}),
          ...this.options.env,
        },
      },
    );
    const append = (chunk: Buffer) => {
      this.log += chunk.toString();
      // What a test reads is the start (the listening line) and the tail: a long run keeps its last megabytes.
      if (this.log.length > 8_000_000) this.log = this.log.slice(-4_000_000);
    };
    this.child.stdout!.on("data", append);
    this.child.stderr!.on("data", append);
    const child = this.child;
    const listening = await waitFor(
      "opencode to start (its listening line)",
      () => {
        const match = /opencode server listening on (http:\/\/[\d.:]+)/.exec(this.log);
        if (!match && child.exitCode !== null)
          throw new Error(`opencode exited with ${child.exitCode}:\n${this.log.slice(-3000)}`);
        return match;
      },
      { timeoutMs, report: () => this.log.slice(-3000) },
    );
    this.url = listening[1]!;
    const headers: Record<string, string> = this.options.password
      ? { Authorization: `Basic ${Buffer.from(`opencode:${this.options.password}`).toString("base64")}` }
      : {};
    this.client = createOpencodeClient({ baseUrl: this.url, directory: this.project, headers });
    // The first request for a directory creates the instance (and loads the plugin): make it a warm-up. Patient: for a
    // plugin named by its npm spec, OpenCode installs the package and its dependencies in this request, which took
    // over 30 s beside two busy loops.
    await this.client.config.get({ throwOnError: true, signal: AbortSignal.timeout(120_000) });
  }

  /** Kills the server's whole process group by its own pid. */
  kill(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    const child = this.child;
    if (!child?.pid || child.exitCode !== null) return Promise.resolve();
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    try {
      process.kill(-child.pid, signal);
    } catch {
      child.kill(signal);
    }
    return exited;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child?.pid || child.exitCode !== null) return;
    const timer = setTimeout(() => void this.kill("SIGKILL"), 5000);
    await this.kill("SIGTERM");
    clearTimeout(timer);
  }
}
