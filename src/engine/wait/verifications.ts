// The runs of the `verify` command that this process owns. A look whose guard chain answers "verify" (every todo
// closed after continuations, and no run stands for the work as it is) hands the session here: the run is claimed in
// the database first (one running per session, whatever the processes and replicas watching it), then the command
// runs in the session's folder; its end is written (verify.ts: passed, failed, with the failures it counts) and owes
// the session a look, which the caller makes: done, continued with the failure, or stopped after too many.
//
// A run is owned like a countdown (owner + lease, renewed every lease tick). A person's message, a stop or the TUI's
// key cancels it durably, from any process; its owner kills the command then, at once when it is this process that
// saw the cancel, else at its next tick (the renewal finds the run no longer its own). A run whose owner died is
// `interrupted` by whoever finds it and run again by the look that owes; this process's own, at its stop, likewise.
import { createHash } from "node:crypto";
import type { CancelReason, ResumeReason } from "../../core/reasons.js";
import { withoutSecrets } from "../../core/without-secrets.js";
import {
  cancelVerification,
  endVerification,
  interruptVerification,
  renewVerification,
  startVerification,
  type RunOutcome,
} from "../../store/changes/verify.js";
import { latestVerification, runningVerificationsIn } from "../../store/reads.js";
import type { SessionRow, VerificationRow } from "../../store/schema.js";
import type { EngineContext } from "../context.js";
import { withTimeout } from "../host-calls.js";
import { newId } from "../ids.js";
import { runCheck, type CheckResult, type RunCheck } from "./run-check.js";

/** How long a toast of a check (it started; it could not start or ran out of time) stays up. */
const TOAST_MS = 8000;

/** Exit statuses a shell gives a command it could not start: not found (127), not executable (126). */
const COULD_NOT_START = new Set([126, 127]);

interface OwnRun {
  id: string;
  command: string;
  ledgerHash: string | null;
  abort: AbortController;
}

export class Verifications {
  private readonly running = new Map<string, OwnRun>();

  constructor(
    private readonly ctx: EngineContext,
    private readonly run: RunCheck = runCheck,
  ) {}

  /** Whether this process runs the session's check now. */
  has(sessionId: string): boolean {
    return this.running.has(sessionId);
  }

  /**
   * Runs the check of the session's finished list; resolves once it ended. True when this process ran it and wrote its
   * end (the session is then owed a look, the caller's to make); false when another process runs it, or it was
   * cancelled or interrupted (whoever did so wrote it).
   */
  async check(sessionId: string, row: SessionRow | undefined): Promise<boolean> {
    const { ctx } = this;
    const verify = ctx.config.verify;
    if (!verify || this.running.has(sessionId)) return false;
    const now = ctx.clock.now();
    const own: OwnRun = {
      id: newId("ver"),
      command: verify.command,
      ledgerHash: row?.fileLedger ? createHash("sha256").update(row.fileLedger).digest("hex").slice(0, 32) : null,
      abort: new AbortController(),
    };
    const scope = ctx.scope(sessionId);
    const started = {
      ...scope,
      id: own.id,
      command: own.command,
      afterContinuations: row?.continuations ?? 0,
      startedAt: now,
      ledgerHash: own.ledgerHash,
      owner: ctx.owner,
      leaseUntil: now + ctx.config.leaseMs,
    };
    this.running.set(sessionId, own);
    try {
      if (!(await ctx.store.change(startVerification(started, now)))) return false;
      this.say(`Checking the work: ${own.command}`, "info");
      const startedAt = ctx.clock.monotonic();
      const result = await this.run(own.command, scope.directory, {
        timeoutMs: verify.timeoutSeconds * 1000,
        signal: own.abort.signal,
        // Which session it checks, for a command that reports or checks per session.
        env: { TODO_CONTINUATION_SESSION_ID: sessionId },
      });
      if (result.aborted) return false;
      const outcome = outcomeOf(result, Math.round(ctx.clock.monotonic() - startedAt));
      const ended = { id: own.id, owner: ctx.owner, command: own.command, ledgerHash: own.ledgerHash };
      const wrote = await ctx.lanes.run(sessionId, () =>
        ctx.store.change(endVerification(scope, ended, outcome, ctx.clock.now())),
      );
      if (wrote && !outcome.passed) this.failed(sessionId, own.command, outcome);
      return wrote ?? false;
    } finally {
      if (this.running.get(sessionId) === own) this.running.delete(sessionId);
    }
  }

  /**
   * A failure is logged; one that is no verdict on the work (the command could not start, or ran out of time) is also
   * said in a toast, since it asks the person to fix the command rather than the model to fix the work.
   */
  private failed(sessionId: string, command: string, outcome: Extract<RunOutcome, { passed: false }>): void {
    const { ctx } = this;
    const { exitCode, failure } = outcome;
    ctx.log("info", "the check of a finished list failed", { sessionId, command, exitCode, failure });
    if (failure === "exit") return;
    const what = failure === "timeout" ? "ran out of time" : "could not start";
    const said = outcome.output.trimEnd().split("\n").at(-1);
    this.say(`The check ${JSON.stringify(command)} ${what}${said ? `: ${said}` : ""}.`, "warning");
  }

  /** A toast, where OpenCode shows them and the person wants them (the TUI's panel shows the check as well). */
  private say(message: string, variant: "info" | "warning"): void {
    const { ctx } = this;
    if (!ctx.config.toast) return;
    void withTimeout("toast", ctx.config.hostTimeoutMs, () =>
      ctx.host.toast({ title: "Todo continuation", message, variant, durationMs: TOAST_MS }),
    ).catch(() => undefined);
  }

  /**
   * A person wrote, stopped the session or pressed the key: the session's running check, whichever process runs it,
   * is cancelled, and killed here if it runs here. Nothing to do without `verify`.
   */
  async cancel(sessionId: string, reason: CancelReason): Promise<void> {
    const { ctx } = this;
    this.running.get(sessionId)?.abort.abort();
    if (!ctx.config.verify) return;
    await ctx.lanes.post(sessionId, () =>
      ctx.store.change(cancelVerification(ctx.scope(sessionId), reason, ctx.clock.now())),
    );
  }

  /** A change elsewhere (a stop) ended the session's run: its command is killed, nothing more written. */
  letGo(sessionId: string): void {
    this.running.get(sessionId)?.abort.abort();
  }

  /**
   * A lease tick: this process's runs stay its own for another lease, and one that no longer is (cancelled in
   * another process) is killed; then the runs of this scope whose process died are interrupted, each session owed the
   * look that runs its check again (made by the same tick's owed looks).
   */
  async tick(reason: ResumeReason): Promise<void> {
    const { ctx } = this;
    const leaseUntil = ctx.clock.now() + ctx.config.leaseMs;
    for (const [sessionId, own] of [...this.running]) {
      if (!(await ctx.store.change(renewVerification({ id: own.id, owner: ctx.owner }, leaseUntil))))
        this.letGo(sessionId);
    }
    await this.recover(reason);
  }

  /** The runs of this scope left running by a process that is gone: interrupted, their sessions owed a look. */
  async recover(reason: ResumeReason): Promise<number> {
    const { ctx } = this;
    if (!ctx.config.verify) return 0;
    const now = ctx.clock.now();
    let interrupted = 0;
    for (const run of await ctx.store.read(runningVerificationsIn(ctx.followed))) {
      if (this.running.get(run.sessionId)?.id === run.id || !this.orphaned(run, now)) continue;
      const scope = ctx.scope(run.sessionId);
      if (await ctx.lanes.run(run.sessionId, () => ctx.store.change(interruptVerification(scope, run, reason, now))))
        interrupted++;
    }
    return interrupted;
  }

  /**
   * This process stops: each of its runs is killed and written `interrupted`, its session owed the look that runs
   * it again (in this process's successor, or another watching the session).
   */
  async stop(reason: ResumeReason): Promise<void> {
    const { ctx } = this;
    const runs = [...this.running];
    for (const [, own] of runs) own.abort.abort();
    const now = ctx.clock.now();
    for (const [sessionId, own] of runs) {
      const row = await ctx.store.read(latestVerification(sessionId));
      if (row?.id === own.id) await ctx.store.change(interruptVerification(ctx.scope(sessionId), row, reason, now));
    }
  }

  private orphaned(run: VerificationRow, now: number): boolean {
    return (
      run.owner === null || run.owner === this.ctx.owner || !this.ctx.store.ownerAlive(run.owner, run.leaseUntil, now)
    );
  }
}

/** How a finished run ended, its output kept without the environment's secrets. */
function outcomeOf(result: CheckResult, durationMs: number): RunOutcome {
  const output = withoutSecrets(result.output, process.env);
  if (result.exitCode === 0) return { passed: true, exitCode: 0, durationMs, output };
  const failure = result.timedOut
    ? "timeout"
    : result.exitCode === null || COULD_NOT_START.has(result.exitCode)
      ? "not_run"
      : "exit";
  return { passed: false, failure, exitCode: result.exitCode, durationMs, output };
}
