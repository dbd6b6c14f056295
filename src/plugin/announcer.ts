// What the plugin has to say about itself — a configuration it refused, a database it could not open, another
// enforcer in the same OpenCode — said where a person looks: OpenCode's log at once, the status file that `doctor`
// and the TUI read, and one toast at the first idle unless the TUI already showed it.
import type { Resolution } from "../config/resolve.js";
import type { HostPort } from "../host/port.js";
import { shownChannels } from "../notices/redact.js";
import { redactUrl } from "../store/open/location.js";
import { PACKAGE_VERSION } from "../package-version.js";
import { otherEnforcerWarning } from "./other-enforcers.js";
import { statusNews, wasSeen, writeStatus, type PluginStatus } from "./status-file.js";

/** Long enough to be read, and to be seen by someone who looks away for a moment. */
const TOAST_MS = 15_000;
/** When this process started: a TUI's note that it showed the news counts from then on. */
const PROCESS_START_MS = Date.now() - process.uptime() * 1000;
/** The news each project's plugins in this process showed: a second start of the plugin for it says nothing again. */
const shownNews = new Set<string>();

/** An option's value as the status file keeps it: a database URL's password and a channel's credentials never. */
function withoutSecretsOf(key: string, value: unknown): unknown {
  if (key === "databasePath") return redactUrl(String(value));
  return key === "notify" ? shownChannels(value) : value;
}

export class Announcer {
  readonly status: PluginStatus;
  /** Set once the first idle was seen: news is told then, once.  */
  private toldOnScreen = false;

  constructor(
    private readonly host: Pick<HostPort, "log" | "toast">,
    directory: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.status = {
      format: 1,
      version: PACKAGE_VERSION,
      directory,
      pid: process.pid,
      startedAt: new Date().toISOString(),
      state: "on",
      database: "",
      problems: [],
      warnings: [],
      files: [],
      options: {},
    };
  }

  configured(resolution: Resolution): void {
    this.status.files = resolution.files;
    for (const warning of resolution.warnings) this.warn(warning, false);
    if (resolution.config) {
      for (const [key, value] of Object.entries(resolution.config)) {
        const source = resolution.sources[key as keyof typeof resolution.sources];
        this.status.options[key] = { value: withoutSecretsOf(key, value), source };
      }
      this.status.database = redactUrl(resolution.config.databasePath);
    }
    this.write();
  }

  /** The enforcer will not run: `problems` say why, one line each. */
  off(problems: string[], headline: string): void {
    this.status.state = "off";
    this.status.headline = `off: ${headline}`;
    this.status.problems.push(...problems);
    for (const problem of problems) this.host.log("error", `todo-continuation is off: ${problem}`);
    this.write();
  }

  /** The enforcer runs on an in-memory database: `problem` says why its own could not be opened. */
  inMemory(problem: string): void {
    this.host.log("error", `todo-continuation: ${problem}`);
    this.status.state = "memory";
    this.status.headline = "in memory: its database cannot be opened";
    this.status.problems.push(problem);
    this.write();
  }

  warn(warning: string, write = true): void {
    if (this.status.warnings.includes(warning)) return;
    this.status.warnings.push(warning);
    this.status.headline ??= "warning";
    this.host.log("warn", `todo-continuation: ${warning}`);
    if (write) this.write();
  }

  /** OpenCode's config, as its `config` hook hands it over: the place to see another enforcer. */
  opencodeConfig(config: { plugin?: unknown } | undefined): void {
    const warning = otherEnforcerWarning(config, this.status.directory, this.env);
    if (!warning) return;
    this.status.headline ??= "another enforcer is on";
    this.warn(warning);
  }

  /** OpenCode's event, where no engine runs (the plugin is off): the first idle is when news is told. */
  event(event: unknown): void {
    if ((event as { type?: unknown })?.type === "session.idle") this.idle();
  }

  /** A session went idle: the first time, a toast, if there is news the TUI has not shown. */
  idle(): void {
    if (this.toldOnScreen) return;
    this.toldOnScreen = true;
    const { problems, warnings } = this.status;
    if (problems.length + warnings.length === 0 || wasSeen(this.status, this.env, PROCESS_START_MS)) return;
    const news = `${this.status.directory}\n${statusNews(this.status)}`;
    if (shownNews.has(news)) return;
    shownNews.add(news);
    this.host
      .toast({
        title: this.status.state === "off" ? "todo-continuation is off" : "todo-continuation",
        message: [...problems, ...warnings].join("\n"),
        variant: problems.length > 0 ? "error" : "warning",
        durationMs: TOAST_MS,
      })
      .catch((error: unknown) =>
        this.host.log("warn", `todo-continuation could not show a toast: ${(error as Error).message}`),
      );
  }

  private write(): void {
    const failure = writeStatus(this.status, this.env);
    if (failure) this.host.log("warn", `todo-continuation could not write its status file: ${failure.message}`);
  }
}
