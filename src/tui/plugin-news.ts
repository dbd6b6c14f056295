// What a person must hear at start: the TUI's own options refused, or what the server plugin wrote in its status file
// (off for a bad configuration, running in memory, another enforcer on). Each piece of news is one toast, once, and a
// line in the panel for as long as it holds. The server plugin writes its status when OpenCode first loads it, which
// may be a moment after the TUI starts: the file is looked at again on the server's events and a few times early on.
import { statSync } from "node:fs";
import { markSeen, readStatus, statusNews, statusPath } from "../plugin/status-file.js";
import type { TuiApi } from "./host-api.js";
import type { SessionViews } from "./session-views.js";

/** Looks after start, in case no event comes soon: the server plugin loads within seconds of the TUI. */
export const EARLY_LOOKS_MS = [500, 2000, 5000, 15_000];
/** Long enough to be read. */
const TOAST_MS = 15_000;

export class PluginNews {
  private modifiedAt: number | undefined;
  private readonly toasted = new Set<string>();
  private readonly timers: Array<ReturnType<typeof setTimeout>> = [];

  constructor(
    private readonly api: Pick<TuiApi, "ui">,
    private readonly views: SessionViews,
    private readonly directory: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  /** The TUI's own options were refused: said at once (the panel says it too, in place of the session). */
  ownProblem(problem: string): void {
    this.toast("todo-continuation: TUI options refused", problem, "error");
  }

  start(): void {
    this.look();
    for (const delay of EARLY_LOOKS_MS) this.timers.push(setTimeout(() => this.look(), delay));
  }

  /** Reads the status file again if it changed since the last look (one `stat` otherwise). */
  look(): void {
    let modifiedAt: number;
    try {
      modifiedAt = statSync(statusPath(this.directory, this.env)).mtimeMs;
    } catch {
      return;
    }
    if (modifiedAt === this.modifiedAt) return;
    this.modifiedAt = modifiedAt;
    const status = readStatus(this.directory, this.env);
    if (!status) return;
    const news = [...status.problems, ...status.warnings];
    this.views.announce(news.length > 0 ? status.headline : undefined);
    if (news.length === 0 || this.toasted.has(statusNews(status))) return;
    this.toasted.add(statusNews(status));
    const title = status.state === "off" ? "todo-continuation is off" : "todo-continuation";
    this.toast(title, news.join("\n"), status.problems.length > 0 ? "error" : "warning");
    markSeen(status, this.env);
  }

  dispose(): void {
    for (const timer of this.timers) clearTimeout(timer);
  }

  private toast(title: string, message: string, variant: "error" | "warning"): void {
    try {
      this.api.ui.toast({ title, message, variant, duration: TOAST_MS });
    } catch {
      // A TUI that refuses a toast still has the panel's line.
    }
  }
}
