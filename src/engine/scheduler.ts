// Durable deadlines. Armed countdowns live in SQLite with a wall-clock deadline and an owner; this process waits for
// the ones it owns on the monotonic clock (one TimerQueue), renews its leases, and at start (and on every lease
// tick) takes over armed countdowns of its scope whose owner is gone or whose lease ran out, applying the misfire
// policy: re-arm for the time left, fire now if late by less than the resume window, else expire.
import { classifyArmedCountdown } from "../core/resume.js";
import { EXPIRE_REASON, RESUME_REASON, TAKEOVER_REASON, type ResumeReason } from "../core/reasons.js";
import type { Repository } from "../store/repository.js";
import type { CountdownRow } from "../store/schema.js";
import type { Clock } from "./clock.js";
import { ownerMayBeAlive } from "./owner.js";
import type { TimerQueue } from "./timer-queue.js";

const RECOVERY_CHUNK = 500;

export interface DueInfo {
  /** How late the countdown fires relative to its deadline (0 for one this process armed and waited for). */
  lateMs: number;
  /** Picked up after a restart or from another owner. */
  resumed: boolean;
}

export interface RecoveryReport {
  rearmed: number;
  fired: number;
  expired: number;
  /** Armed countdowns left alone because a live owner holds them. */
  foreign: number;
}

export interface SchedulerOptions {
  repo: Repository;
  timers: TimerQueue;
  clock: Clock;
  owner: string;
  directory: string;
  leaseMs: number;
  resumeWindowMs: number;
  /** A countdown this process owns reached its deadline. */
  onDue: (countdown: CountdownRow, info: DueInfo) => void;
  /** A countdown was taken over and is now waiting here (the engine mirrors it in memory). */
  onAdopted: (countdown: CountdownRow) => void;
  /** The engine is already handling this countdown (e.g. its injection is queued): never adopt it twice. */
  isHeld: (id: string) => boolean;
  onError: (what: string, error: unknown) => void;
}

export class CountdownScheduler {
  private leaseTimer: ReturnType<typeof setInterval> | undefined;
  private readonly tracked = new Map<string, CountdownRow>();

  constructor(private readonly o: SchedulerOptions) {}

  get size(): number {
    return this.tracked.size;
  }

  /** Waits for the countdown's deadline; the wait never exceeds the countdown's own duration (clock jumps). */
  track(countdown: CountdownRow, info: Omit<DueInfo, "lateMs"> = { resumed: false }): void {
    const now = this.o.clock.now();
    const duration = Math.max(0, countdown.deadlineAt - countdown.armedAt);
    const delay = Math.min(Math.max(0, countdown.deadlineAt - now), duration);
    this.tracked.set(countdown.id, countdown);
    this.o.timers.schedule(`countdown:${countdown.id}`, delay, () => {
      this.tracked.delete(countdown.id);
      const lateMs = Math.max(0, this.o.clock.now() - countdown.deadlineAt);
      this.o.onDue(countdown, { lateMs: info.resumed ? lateMs : 0, resumed: info.resumed });
    });
  }

  untrack(id: string): void {
    this.tracked.delete(id);
    this.o.timers.cancel(`countdown:${id}`);
  }

  isTracked(id: string): boolean {
    return this.tracked.has(id);
  }

  /** Picks up the armed countdowns of this scope that no live process holds. */
  recover(reason: ResumeReason = RESUME_REASON): RecoveryReport {
    const report: RecoveryReport = { rearmed: 0, fired: 0, expired: 0, foreign: 0 };
    const now = this.o.clock.now();
    const candidates = this.o.repo.armedInScope(this.o.directory).filter((countdown) => {
      if (this.tracked.has(countdown.id) || this.o.isHeld(countdown.id)) return false;
      const orphaned =
        countdown.owner === null ||
        countdown.owner === this.o.owner ||
        !ownerMayBeAlive(countdown.owner) ||
        (countdown.leaseUntil ?? 0) < now;
      if (!orphaned) report.foreign++;
      return orphaned;
    });
    // In chunks: one transaction per chunk keeps a big recovery fast without holding the write lock for long.
    for (let start = 0; start < candidates.length; start += RECOVERY_CHUNK) {
      this.o.repo.inTransaction(() => {
        for (const countdown of candidates.slice(start, start + RECOVERY_CHUNK))
          this.adoptOne(countdown, now, reason, report);
      });
    }
    return report;
  }

  private adoptOne(countdown: CountdownRow, now: number, reason: ResumeReason, report: RecoveryReport): void {
    if (!this.o.repo.takeOver(countdown.id, countdown.owner, this.o.owner, now + this.o.leaseMs)) return;
    const adopted: CountdownRow = { ...countdown, owner: this.o.owner, leaseUntil: now + this.o.leaseMs };
    const verdict = classifyArmedCountdown(countdown, now, this.o.resumeWindowMs);
    const detail = { countdownId: countdown.id, previousOwner: countdown.owner, deadlineAt: countdown.deadlineAt };
    if (verdict.action === "expire") {
      this.o.repo.endCountdown(adopted, "expired", EXPIRE_REASON, now, {
        event: "expired",
        reason: EXPIRE_REASON,
        detail: { ...detail, lateMs: verdict.lateMs, resumeWindowMs: this.o.resumeWindowMs },
      });
      report.expired++;
      return;
    }
    this.o.repo.audit(now, adopted, {
      event: "resumed",
      reason,
      detail: {
        ...detail,
        ...(verdict.action === "rearm" ? { remainingMs: verdict.remainingMs } : { lateMs: verdict.lateMs }),
      },
    });
    this.o.onAdopted(adopted);
    if (verdict.action === "rearm") {
      this.track({ ...adopted, deadlineAt: now + verdict.remainingMs }, { resumed: true });
      report.rearmed++;
      return;
    }
    // Overdue: due at once, on the next tick of the timer, after the adoption is committed (firing reads and writes
    // the same rows) and without holding up whoever awaits the recovery.
    this.track(adopted, { resumed: true });
    report.fired++;
  }

  /** Renews this process's leases and adopts orphans, every third of a lease (not while `paused()`). */
  startLeaseLoop(onTick?: () => void, paused: () => boolean = () => false): void {
    if (this.leaseTimer) return;
    const period = Math.max(100, Math.floor(this.o.leaseMs / 3));
    this.leaseTimer = setInterval(() => {
      if (paused()) return;
      try {
        this.o.repo.renewLeases(this.o.owner, this.o.clock.now() + this.o.leaseMs);
        this.recover(TAKEOVER_REASON);
        onTick?.();
      } catch (error) {
        this.o.onError("lease renewal", error);
      }
    }, period);
    this.leaseTimer.unref?.();
  }

  /** Stops waiting for everything tracked, leaving the rows as they are (still ours, adopted again later). */
  untrackAll(): void {
    for (const id of [...this.tracked.keys()]) this.untrack(id);
  }

  /** Stops waiting; with `release`, hands the armed countdowns back so that a successor can adopt them at once. */
  stop(release: boolean): void {
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    this.leaseTimer = undefined;
    for (const id of [...this.tracked.keys()]) this.untrack(id);
    if (release) {
      try {
        this.o.repo.releaseLeases(this.o.owner);
      } catch (error) {
        this.o.onError("lease release", error);
      }
    }
  }
}
