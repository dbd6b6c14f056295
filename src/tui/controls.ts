// What a person can do from the TUI, each a durable state change of the same scripts every writer uses
// (store/changes/): cancel the running countdown (the key), stop, resume. No model turn; the server side obeys the row.
import { cancelByKey } from "../store/changes/cancel-by-key.js";
import { resume } from "../store/changes/resume.js";
import { stop } from "../store/changes/stop.js";
import type { OperatorStore } from "../store/operator.js";
import type { SessionScope } from "../store/port.js";
import { q } from "../store/script.js";
import type { TuiApi } from "./host-api.js";
import type { SessionViews } from "./session-views.js";

export class Controls {
  constructor(
    private readonly api: TuiApi,
    private readonly store: OperatorStore | undefined,
    private readonly views: SessionViews,
  ) {}

  /** The session shown now, if a session is shown. */
  inView(): string | undefined {
    const route = this.api.route.current;
    const id = route.name === "session" ? route.params?.sessionID : undefined;
    return typeof id === "string" ? id : undefined;
  }

  /** Ends the running countdown of the session in view, if there is one; quiet when there is none. */
  async cancel(via: string, announceNone: boolean): Promise<void> {
    const sessionId = this.inView();
    if (!sessionId || !this.store) return;
    const store = this.store;
    const ended = await this.guarded("cancelling", async () =>
      store.change(cancelByKey(await this.scope(sessionId), Date.now(), { source: "tui", via })),
    );
    if (ended) this.say("Countdown cancelled: nothing will be sent.", "success");
    else if (announceNone) this.say("No countdown is running in this session.");
    await this.views.refresh(sessionId);
  }

  async stop(): Promise<void> {
    const sessionId = this.inView();
    if (!sessionId || !this.store) return this.say("Open a session first.");
    const store = this.store;
    const result = await this.guarded("stopping", async () =>
      store.change(stop(await this.scope(sessionId), "tui", Date.now())),
    );
    if (result)
      this.say(
        result.changed ? "Stopped for this session, also after restarts, until resumed." : "Already stopped.",
        "success",
      );
    await this.views.refresh(sessionId);
  }

  async resume(): Promise<void> {
    const sessionId = this.inView();
    if (!sessionId || !this.store) return this.say("Open a session first.");
    const store = this.store;
    // The enforcer looks at the session again within a lease tick, as after the CLI's resume (changes/resume.ts).
    const changed = await this.guarded("resuming", async () =>
      store.change(resume(await this.scope(sessionId), "tui", Date.now())),
    );
    if (changed !== undefined)
      this.say(
        changed
          ? "Resumed: it continues within a few seconds if todos are open."
          : "Nothing to resume: it was neither stopped nor paused.",
        "success",
      );
    await this.views.refresh(sessionId);
  }

  /** The session's own scope when the database knows it, else the TUI's directory. */
  private async scope(sessionId: string): Promise<SessionScope> {
    const known = await this.store?.read(q.session(sessionId));
    const directory = known?.directory ?? this.api.state.path.directory;
    return { sessionId, directory, server: known?.server ?? null };
  }

  private async guarded<T>(what: string, work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await work();
    } catch (error) {
      return this.views.failed(what, error);
    }
  }

  private say(message: string, variant: "info" | "success" | "warning" = "info"): void {
    try {
      this.api.ui.toast({ variant, title: "Todo continuation", message, duration: 3000 });
    } catch {
      // A toast is a courtesy; the panel shows the state anyway.
    }
  }
}
