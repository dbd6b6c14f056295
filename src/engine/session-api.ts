// The programmatic API on one session (Enforcer's methods of the same names): a session id is checked before anything
// is applied, a recovery mark, a stop or an allowance goes through the same durable changes as the CLI's and the
// TUI's, and a write that fails is reported and thrown to the caller.
import { idOf } from "../core/fields.js";
import type { StopSource } from "../core/reasons.js";
import { readParkRequest } from "../core/park-request.js";
import { allow as allowChange, type Allowed, type Grant } from "../store/changes/allow.js";
import { park } from "../store/changes/park.js";
import { resume as resumeChange } from "../store/changes/resume.js";
import { stop as stopChange } from "../store/changes/stop.js";
import type { SessionScope } from "../store/port.js";
import type { EngineContext } from "./context.js";
import { newId } from "./ids.js";
import type { EngineParts } from "./parts.js";

/** What `continue_later` answers: parked until when, or why not (words the model reads). */
export type ContinueLaterAnswer = { parked: true; parkId: string; until: number } | { parked: false; error: string };

const CHECKS_NOT_RUN =
  "`check` is not run by this version of todo-continuation; park for a time (`minutes` or `at`) and check when woken";

export class SessionApi {
  constructor(
    private readonly ctx: EngineContext,
    private readonly parts: Pick<EngineParts, "countdowns" | "looks">,
  ) {}

  markRecovering(sessionId: string): void {
    if (!this.validSession("markRecovering", sessionId) || !this.ctx.lifecycle.deciding) return;
    const since = this.ctx.clock.now();
    void this.parts.countdowns.cancel(sessionId, "recovering", { source: "api" }, { recoveringSince: since });
  }

  markRecoveryComplete(sessionId: string): void {
    if (!this.validSession("markRecoveryComplete", sessionId) || !this.ctx.lifecycle.deciding) return;
    void this.ctx.changeSession(sessionId, { recoveringSince: null });
  }

  /**
   * Sets the durable stop (and cancels an armed countdown). Resolves with false when the session was already
   * stopped; rejects when the stop could not be written (also reported as an `error` event).
   */
  async stop(sessionId: string, source: StopSource = "api"): Promise<boolean> {
    this.requireSession("stop", sessionId);
    const { changed, cancelled } = await this.change("stop", sessionId, (scope, now) =>
      this.ctx.store.change(stopChange(scope, source, now)),
    );
    if (cancelled) this.parts.countdowns.letGo(sessionId, cancelled.id);
    return changed;
  }

  /**
   * An explicit resume: lifts the durable stop and a takeover pause, starts the loop protections over, and looks at
   * the session again at once. Resolves with false when there was nothing to lift or reset; rejects when it could
   * not be written.
   */
  async resume(sessionId: string, source: StopSource = "api"): Promise<boolean> {
    this.requireSession("resume", sessionId);
    const { changed } = await this.change("resume", sessionId, (scope, now) =>
      this.ctx.store.change(resumeChange(scope, source, now)),
    );
    // A command's own turn makes the session busy first; its idle is evaluated then. The API looks now (the CLI and
    // the TUI, other processes, leave the look owed: store/changes/resume.ts).
    if (changed && source !== "command") void this.parts.looks.evaluate(sessionId, "resume");
    return changed;
  }

  /**
   * More budget for the session (`grant`'s amounts, or with none as much again as it had since the last real user
   * message): added beyond the caps until the next real user message or resume. A budget stop the user was told of is
   * lifted, and the session looked at again at once. Resolves with what was granted and lifted (`changed: false`: a
   * session never seen); rejects when it could not be written, or an amount is below 0.
   */
  async allow(sessionId: string, grant: Grant = {}, source: StopSource = "api"): Promise<Allowed> {
    this.requireSession("allow", sessionId);
    const allowed = await this.change("allow", sessionId, (scope, now) =>
      this.ctx.store.change(allowChange(scope, grant, source, now)),
    );
    if (allowed.lifted.length > 0 && source !== "command") void this.parts.looks.evaluate(sessionId, "resume");
    return allowed;
  }

  /**
   * The agent's `continue_later`: the session parked until the time it asked for, read strictly (a call that cannot
   * be honoured is answered with why, and parks nothing). A park with a check waits for the check's runner, which this
   * version does not have yet: such a call is refused rather than parked on a check that would never run.
   */
  async continueLater(sessionId: string, args: unknown): Promise<ContinueLaterAnswer> {
    this.requireSession("continueLater", sessionId);
    const { ctx } = this;
    const reading = readParkRequest(args, { now: ctx.clock.now(), maxParkHours: ctx.config.maxParkHours });
    if (!reading.ok) return { parked: false, error: reading.error };
    const { reason, until, check } = reading.park;
    if (check) return { parked: false, error: CHECKS_NOT_RUN };
    const result = await this.change("continueLater", sessionId, (scope, now) =>
      ctx.store.change(
        park(scope, { id: newId("park"), reason: "agent", wakeAt: until, detail: { asked: reason } }, now),
      ),
    );
    if (!result.parked)
      return { parked: false, error: "the session is stopped by the person: nothing will continue it" };
    ctx.events.emit("session_parked", { sessionId, reason: "agent", until });
    return { parked: true, parkId: result.id, until };
  }

  /** Evaluates a session as if it had just gone idle (after a reconnect, a resume, or a lost injection). */
  reevaluate(sessionId: string): Promise<void> {
    if (!this.validSession("reevaluate", sessionId)) return Promise.resolve();
    return this.parts.looks.evaluate(sessionId, "reevaluate");
  }

  private async change<T>(what: string, sessionId: string, write: (scope: SessionScope, now: number) => Promise<T>) {
    const { ctx } = this;
    if (ctx.lifecycle.stopAsked) throw new Error(`todo-continuation cannot ${what}: it is stopped`);
    try {
      return await ctx.lanes.run(sessionId, () => write(ctx.scope(sessionId), ctx.clock.now()));
    } catch (error) {
      ctx.failed(what, error);
      throw error;
    }
  }

  /** A missing or empty session id is refused, never applied to some session (peers continued the wrong one). */
  private validSession(what: string, sessionId: unknown): sessionId is string {
    if (idOf(sessionId) !== undefined && (sessionId as string).trim() !== "") return true;
    this.ctx.log("warn", `${what} ignored: no session id (or one no OpenCode session can have)`);
    return false;
  }

  private requireSession(what: string, sessionId: unknown): asserts sessionId is string {
    if (!this.validSession(what, sessionId)) throw new TypeError(`todo-continuation ${what}: not a session id`);
  }
}
