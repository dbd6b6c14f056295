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
import { withTimeout } from "./host-calls.js";
import { newId } from "./ids.js";
import type { EngineParts } from "./parts.js";

/** What `continue_later` answers: parked until when, or why not (words the model reads). */
export type ContinueLaterAnswer = { parked: true; parkId: string; until: number } | { parked: false; error: string };

export class SessionApi {
  constructor(
    private readonly ctx: EngineContext,
    private readonly parts: Pick<EngineParts, "countdowns" | "looks" | "verifications">,
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
   * Sets the durable stop (and cancels an armed countdown and a running check). Resolves with false when the session was already
   * stopped; rejects when the stop could not be written (also reported as an `error` event).
   */
  async stop(sessionId: string, source: StopSource = "api"): Promise<boolean> {
    this.requireSession("stop", sessionId);
    const { changed, cancelled } = await this.change("stop", sessionId, (scope, now) =>
      this.ctx.store.change(stopChange(scope, source, now)),
    );
    if (cancelled) this.parts.countdowns.letGo(sessionId, cancelled.id);
    // The stop cancelled a running check, if one ran: here its command is killed too.
    if (changed) this.parts.verifications.letGo(sessionId);
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
   * The agent's `continue_later`: the session parked until the time it asked for, or until its check passes, read
   * strictly (a call that cannot be honoured is answered with why, and parks nothing). A check is taken only when
   * `agent` (the agent that called the tool) may run it without being asked, by OpenCode's own rules: the tool is
   * never a way around the person's permissions.
   */
  async continueLater(sessionId: string, args: unknown, agent?: string): Promise<ContinueLaterAnswer> {
    this.requireSession("continueLater", sessionId);
    const { ctx } = this;
    const reading = readParkRequest(args, { now: ctx.clock.now(), maxParkHours: ctx.config.maxParkHours });
    if (!reading.ok) return { parked: false, error: reading.error };
    const { reason, until, check } = reading.park;
    if (check) {
      const refused = await this.checkRefused(sessionId, agent, check.command);
      if (refused) return { parked: false, error: refused };
    }
    const request = { id: newId("park"), reason: "agent" as const, wakeAt: until, check, detail: { asked: reason } };
    const result = await this.change("continueLater", sessionId, (scope, now) =>
      ctx.store.change(park(scope, request, now)),
    );
    if (!result.parked)
      return { parked: false, error: "the session is stopped by the person: nothing will continue it" };
    ctx.events.emit("session_parked", { sessionId, reason: "agent", until });
    return { parked: true, parkId: result.id, until };
  }

  /** Why the check may not be taken, or undefined when the agent may run it without being asked. */
  private async checkRefused(sessionId: string, agent: string | undefined, command: string) {
    const { ctx } = this;
    if (!agent) return "the agent that asked is not known, so its permission to run the check cannot be judged";
    const project = ctx.followed.directory;
    try {
      const verdict = await withTimeout("permission read", ctx.config.hostTimeoutMs, (signal) =>
        ctx.host.mayRunCommand({ sessionId, agent, command, project }, signal),
      );
      return verdict.allowed ? undefined : `the check will not be run: ${verdict.why}`;
    } catch (error) {
      ctx.log("warn", "continue_later could not read the agent's permissions", { sessionId, error: String(error) });
      return "OpenCode did not say what the agent may run, so the check will not be run; park for a time instead";
    }
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
