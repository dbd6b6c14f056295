// One e2e world where THE PLUGIN runs against the simulated OpenCode: the simulated server of sim-world.ts, and the
// plugin in a Bun process of its own hosted as OpenCode hosts it (plugin-host.ts). For cases of the plugin's own logic
// across a killed OpenCode or a database that fails, where a real `opencode serve` would add only its start-up and
// first-prompt CPU. OpenCode killed is the host SIGKILLed and the server closed; started again, the server listens on
// its port and a new host opens the same database. What the plugin sent to OpenCode's log is the sim's record of it.
import { mkdirSync } from "node:fs";
import { startProcess, type RunningProcess } from "../../crash/processes.js";
import { homeFolders } from "./opencode-server.js";
import { SimWorld, type SimWorldOptions } from "./sim-world.js";

export class SimPluginWorld extends SimWorld {
  private host: RunningProcess | undefined;

  /** `pluginOptions` as the plugin's entry in opencode.json gives them (`databasePath` included, when set). */
  constructor(
    private readonly pluginOptions: Record<string, unknown> = {},
    simOptions: Omit<SimWorldOptions, "databasePath" | "password"> = {},
  ) {
    const databasePath = pluginOptions.databasePath;
    super({ ...simOptions, ...(typeof databasePath === "string" ? { databasePath } : {}) });
  }

  /** The plugin's process id (gone once the world's OpenCode is killed). */
  get pid(): number | undefined {
    return this.host?.child.pid;
  }

  override async start(): Promise<void> {
    await super.start();
    mkdirSync(this.project, { recursive: true });
    await this.startHost();
  }

  /** SIGKILL to the plugin's process, then the server closed: OpenCode killed. */
  override async crashServer(): Promise<void> {
    await this.killHost();
    await super.crashServer();
  }

  /** The server on its port again, and the plugin in a new process on the same database. */
  override async startServer(): Promise<void> {
    await super.startServer();
    await this.startHost();
  }

  private async startHost(): Promise<void> {
    const host = startProcess("bun", "../e2e/support/plugin-host.ts", {
      ...homeFolders(this.root),
      SIM_URL: this.server.url,
      PROJECT: this.project,
      PLUGIN_OPTIONS: JSON.stringify({ databasePath: this.dbPath, ...this.pluginOptions }),
    });
    this.host = host;
    await host.waitFor("ready", 30_000);
  }

  private async killHost(): Promise<void> {
    const host = this.host;
    if (!host || host.child.exitCode !== null || host.child.signalCode !== null) return;
    host.child.kill("SIGKILL");
    await host.exited;
  }

  protected override async stopRunning(): Promise<void> {
    await this.killHost();
    await super.stopRunning();
  }

  protected override waitReport(): string {
    return `${super.waitReport()}\nthe plugin's log: ${JSON.stringify(this.logLines().slice(-20))}\nits stderr: ${this.host?.stderr().slice(-2000) ?? ""}`;
  }
}
