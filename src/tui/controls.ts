// What a person can do from the TUI, each a durable state change of the same scripts every writer uses
// (store/changes/): cancel the running countdown (the key, typing into the prompt), the session's park or the check of
// its finished list (the key),
// wake a park now, stop, resume, allow more. No model
// turn; the server side obeys the row.
import type { Allowance } from "../core/decision.js";
import { allowedWords, liftedWords } from "../core/explain.js";
import { allow } from "../store/changes/allow.js";
import { cancelByKey } from "../store/changes/cancel-by-key.js";
import { cancelVerification } from "../store/changes/verify.js";
import { resume } from "../store/changes/resume.js";
import { stop } from "../store/changes/stop.js";
import { unpark } from "../store/changes/unpark.js";
import { wake } from "../store/changes/wake.js";
import type { OperatorStore } from "../store/operator/operator.js";
import type { SessionScope } from "../store/port.js";
import { armedFor, latestVerification, parkOf, session } from "../store/reads.js";
import type { TuiApi } from "./host-api.js";
import type { SessionViews } from "./session-views.js";
import type { TuiStore } from "./tui-store.js";

export const SAID = {
  cancelled: "Countdown cancelled: nothing will be sent.",
  unparked: "Wait cancelled: nothing will wake this session.",
  checkCancelled: "Check cancelled: nothing will be sent.",
  woken: "Woken: it goes on soon if todos are open.",
  notParked: "This session is not parked.",
  noCountdown: "No countdown is running in this session.",
  noSession: "Open a session first.",
  stopped: "Stopped here, also after restarts, until resumed.",
  alreadyStopped: "Already stopped.",
  resumed: "Resumed: it goes on soon if todos are open.",
  nothingToResume: "Nothing to resume: it was not stopped or paused.",
  allowedOn: "It goes on soon if todos are open.",
  allowedUntil: "It counts until your next message or a resume.",
  nothingToAllow: "Nothing to allow: not seen by the enforcer yet.",
} as const;

/** The resume's toast: what it lifted, on a line of its own, then what happens next. */
export function resumedSaying(lifted: readonly string[]): string {
  const what = liftedWords(lifted);
  return what ? `Lifted ${what}.\n${SAID.resumed}` : SAID.resumed;
}

/**
 * The allowance's toast: the continuations granted, then the amounts, then what it lifted and what happens next, each
 * on a line of its own (one line for all would not fit a toast).
 */
export function allowedSaying(granted: Allowance, lifted: readonly string[]): string {
  const lines = granted.continuations > 0 ? [`Allowed ${allowedWords({ ...granted, cost: 0, tokens: 0 })}.`] : [];
  if (granted.cost > 0 || granted.tokens > 0)
    lines.push(`${lines.length > 0 ? "Also" : "Allowed"} ${allowedWords({ ...granted, continuations: 0 })}.`);
  const what = liftedWords(lifted);
  return [...lines, ...(what ? [`Lifted ${what}.`, SAID.allowedOn] : [SAID.allowedUntil])].join("\n");
}

export class Controls {
  /** Sessions whose countdown is being looked up for a key: one look at a time, however fast the keys come. */
  private readonly looking = new Set<string>();

  constructor(
    private readonly api: TuiApi,
    private readonly store: TuiStore | undefined,
    private readonly views: SessionViews,
  ) {}

  /** The session shown now, if a session is shown. */
  inView(): string | undefined {
    const route = this.api.route.current;
    const id = route.name === "session" ? route.params?.sessionID : undefined;
    return typeof id === "string" ? id : undefined;
  }

  /**
   * A key reached the session's prompt (typing, or the cancel key): if the database says a countdown is running for
   * the session in view, it is cancelled. Read first, so that keys while nothing counts down write nothing.
   */
  async keyed(via: string): Promise<void> {
    const sessionId = this.inView();
    if (!sessionId || this.looking.has(sessionId)) return;
    this.looking.add(sessionId);
    try {
      const store = await this.store?.get();
      const armed = store && (await this.guarded("reading the database", () => store.read(armedFor(sessionId))));
      if (armed) await this.cancel(via, false);
      // The cancel key (not typing: a message sent ends a park, or a check, by itself) ends the session's wait or the
      // check running on its finished list.
      else if (store && via !== "typing" && (await this.waitingOrChecking(store, sessionId)))
        await this.cancel(via, false);
    } finally {
      this.looking.delete(sessionId);
    }
  }

  /**
   * Ends the running countdown of the session in view, or else its park (`unparked`, reason `key`); quiet when there is
   * neither, unless asked to say so.
   */
  async cancel(via: string, announceNone: boolean): Promise<void> {
    const sessionId = this.inView();
    const store = sessionId && (await this.store?.get());
    if (!sessionId || !store) return;
    const scope = await this.guarded("reading the database", () => this.scope(store, sessionId));
    if (!scope) return;
    const ended = await this.guarded("cancelling", () =>
      store.change(cancelByKey(scope, Date.now(), { source: "tui", via })),
    );
    const unparked = !ended && (await this.guarded("cancelling", () => store.change(unpark(scope, "key", Date.now()))));
    // A check is killed by the process that runs it, at its next lease tick (the row says it is cancelled).
    const checkEnded =
      !ended &&
      !(unparked && unparked.unparked) &&
      (await this.guarded("cancelling", () => store.change(cancelVerification(scope, "user_key", Date.now()))));
    if (ended) this.say(SAID.cancelled, "success");
    else if (unparked && unparked.unparked) this.say(SAID.unparked, "success");
    else if (checkEnded) this.say(SAID.checkCancelled, "success");
    else if (announceNone) this.say(SAID.noCountdown);
    await this.views.refresh(sessionId);
  }

  /** Whether the session waits in a park, or its finished list is being checked: what the cancel key ends. */
  private async waitingOrChecking(store: OperatorStore, sessionId: string): Promise<boolean> {
    return this.guarded("reading the database", async () => {
      if (await store.read(parkOf(sessionId))) return true;
      return (await store.read(latestVerification(sessionId)))?.state === "running";
    }).then((found) => found === true);
  }

  /** Wakes the park of the session in view now (`woke`, cause `palette`): a countdown follows, as after any wake. */
  async wakeNow(): Promise<void> {
    const sessionId = this.inView();
    const store = sessionId && (await this.store?.get());
    if (!sessionId || !store) return this.say(SAID.noSession);
    const woke = await this.guarded("waking", async () =>
      store.change(wake(await this.scope(store, sessionId), "palette", Date.now())),
    );
    if (woke) this.say(woke.woke ? SAID.woken : SAID.notParked, woke.woke ? "success" : "info");
    await this.views.refresh(sessionId);
  }

  async stop(): Promise<void> {
    const sessionId = this.inView();
    const store = sessionId && (await this.store?.get());
    if (!sessionId || !store) return this.say(SAID.noSession);
    const result = await this.guarded("stopping", async () =>
      store.change(stop(await this.scope(store, sessionId), "tui", Date.now())),
    );
    if (result) this.say(result.changed ? SAID.stopped : SAID.alreadyStopped, "success");
    await this.views.refresh(sessionId);
  }

  async resume(): Promise<void> {
    const sessionId = this.inView();
    const store = sessionId && (await this.store?.get());
    if (!sessionId || !store) return this.say(SAID.noSession);
    // The enforcer looks at the session again within a lease tick, as after the CLI's resume (changes/resume.ts).
    const resumed = await this.guarded("resuming", async () =>
      store.change(resume(await this.scope(store, sessionId), "tui", Date.now())),
    );
    if (resumed) this.say(resumed.changed ? resumedSaying(resumed.lifted) : SAID.nothingToResume, "success");
    await this.views.refresh(sessionId);
  }

  /** As much again as the session had since the last real user message (changes/allow.ts); a budget stop lifted. */
  async allowMore(): Promise<void> {
    const sessionId = this.inView();
    const store = sessionId && (await this.store?.get());
    if (!sessionId || !store) return this.say(SAID.noSession);
    // The enforcer looks at the session again within a lease tick, as after the CLI's allow (changes/allow.ts).
    const allowed = await this.guarded("allowing more", async () =>
      store.change(allow(await this.scope(store, sessionId), {}, "tui", Date.now())),
    );
    if (allowed)
      this.say(allowed.changed ? allowedSaying(allowed.granted, allowed.lifted) : SAID.nothingToAllow, "success");
    await this.views.refresh(sessionId);
  }

  /** The session's own scope when the database knows it, else the TUI's directory. */
  private async scope(store: OperatorStore, sessionId: string): Promise<SessionScope> {
    const known = await store.read(session(sessionId));
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
