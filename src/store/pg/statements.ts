// The statements of store/statements.ts on PostgreSQL, written out in SQL and, under node-postgres, prepared once per
// connection (the driver parses each name once, then only binds). Measured on this project's 2-core machine:
// drizzle's query builder spent 100–200 µs of CPU building each insert, and PostgreSQL ~100 µs parsing and planning
// each unnamed statement, together more than running them. A countdown's row and its audit row are one statement (a
// data-modifying WITH). Liveness is a heartbeat by the database's clock, never a host's.
import type { AuditValues } from "../audit-row.js";
import { ownerMayBeAlive } from "../owner.js";
import type { CountdownRow, InjectionRow, NewBill, NoticeRow, SessionRow } from "../schema.js";
import { PATCHABLE } from "../session-columns.js";
import { earliestDueFirst, scopesAsJson, type AsyncStatements, type HistoryTable } from "../statements.js";
import type {
  ArmedRef,
  ContinuationRef,
  InScope,
  NewCountdown,
  NewInjection,
  NewNotice,
  NoticeSettlement,
  OwedLook,
  Scope,
  SessionScope,
} from "../types.js";
import type { PgDb } from "./connection.js";
import type { LiveOwners } from "./live-owners.js";
import { exec, statement, type Statement } from "./prepared.js";
import { BILL_KEYS, S } from "./statement-sql.js";
import { N } from "./notice-sql.js";
import { whole } from "./rows.js";

const auditParams = (a: AuditValues) => [a.at, a.sessionId, a.directory, a.server, a.event, a.reason, a.detail];
const SESSION = ["sessionId", "directory", "createdAt", "updatedAt"] as const;
const COUNTDOWN = ["id", "sessionId", "directory", "armedAt", "deadlineAt", "state"] as const;
const INJECTION = ["id", "sessionId", "countdownId", "directory", "createdAt", "status"] as const;
const NOTICE = ["id", "noticeId", "sessionId", "channel", "kind", "createdAt", "body", "state"] as const;

/** The key retention deletes by, table by table. */
const KEY: Record<HistoryTable, string> = {
  audit_events: "id",
  injections: "id",
  countdowns: "id",
  sessions: "session_id",
  continuation_bills: "injection_id",
  notices: "id",
};

const scoped = (scope: Scope) => [scope.directory, scope.server ?? null];
/** How long ago `since` was, by the clock both were read from: a span means the same on every host. */
const ago = (since: number, now: number) => Math.max(0, Math.round(now - since));

export class PgStatements implements AsyncStatements {
  constructor(
    private readonly db: PgDb,
    /** Owners whose heartbeat was fresh at the last look: a look in a transaction brings it up to date. */
    private readonly liveOwners: LiveOwners,
  ) {}

  private run<T>(s: Statement, values: readonly unknown[]): Promise<T[]> {
    return exec<T>(this.db, s, values);
  }

  async session(sessionId: string): Promise<SessionRow | undefined> {
    return whole(await this.run<SessionRow>(S.session, [sessionId]), SESSION)[0];
  }

  async insertSession(scope: SessionScope, now: number): Promise<void> {
    await this.run(S.insertSession, [scope.sessionId, scope.directory, scope.server ?? null, now]);
  }

  async writeSession(row: SessionRow): Promise<void> {
    await this.run(S.writeSession, [row.sessionId, ...PATCHABLE.map((key) => row[key] ?? null), row.updatedAt]);
  }

  async addSpend(sessionId: string, cost: number, tokens: number, now: number): Promise<void> {
    await this.run(S.addSpend, [sessionId, cost, tokens, now]);
  }

  async sessionsToRecheck(scope: Scope, dueBy: number): Promise<OwedLook[]> {
    return whole(await this.run<OwedLook>(S.sessionsToRecheck, [...scoped(scope), dueBy]), ["sessionId", "recheckAt"]);
  }

  async sessionsToRecheckInScopes(scopes: readonly Scope[], dueBy: number): Promise<Array<InScope<OwedLook>>> {
    const rows = await this.run<InScope<OwedLook>>(S.sessionsToRecheckInScopes, [scopesAsJson(scopes), dueBy]);
    return whole(rows, ["sessionId", "directory", "recheckAt"]);
  }

  async audit(row: AuditValues): Promise<void> {
    await this.run(S.audit, auditParams(row));
  }

  async auditMany(rows: AuditValues[]): Promise<void> {
    if (rows.length === 1) await this.run(S.audit, auditParams(rows[0]!));
    else if (rows.length > 1) await this.run(S.auditMany, [JSON.stringify(rows)]);
  }

  async userCancelledSince(sessionId: string, since: number, now: number): Promise<number | undefined> {
    return whole(await this.run<{ at: number }>(S.userCancelledSince, [sessionId, ago(since, now)]), ["at"])[0]?.at;
  }

  async countdown(id: string): Promise<CountdownRow | undefined> {
    return whole(await this.run<CountdownRow>(S.countdown, [id]), COUNTDOWN)[0];
  }

  async armedFor(sessionId: string): Promise<ArmedRef | undefined> {
    return whole(await this.run<ArmedRef>(S.armedFor, [sessionId]), ["id"])[0];
  }

  async armedIn(scope: Scope): Promise<CountdownRow[]> {
    return whole(await this.run<CountdownRow>(S.armedIn, scoped(scope)), COUNTDOWN);
  }

  async armedInScopes(scopes: readonly Scope[]): Promise<CountdownRow[]> {
    return whole(await this.run<CountdownRow>(S.armedInScopes, [scopesAsJson(scopes)]), COUNTDOWN);
  }

  /**
   * Read now, from its heartbeat: the cached view of the replicas is a tick old, and a replica that started meanwhile
   * would look dead and lose its countdown. A pid of this very host that is gone is gone whatever its heartbeat says.
   */
  async ownerAlive(owner: string | null): Promise<boolean> {
    if (owner === null) return false;
    const fresh = whole(await this.run<{ fresh: number }>(S.ownerAlive, [owner]), ["fresh"]).length > 0;
    this.liveOwners.looked(owner, fresh);
    return fresh && ownerMayBeAlive(owner);
  }

  async insertCountdown(c: NewCountdown, armed: AuditValues): Promise<void> {
    await this.run(S.insertCountdown, [
      c.id,
      c.sessionId,
      c.directory,
      c.server ?? null,
      c.armedAt,
      c.deadlineAt,
      c.owner,
      c.leaseUntil,
      c.attempt,
      c.todosOpen,
      c.todosTotal,
      ...auditParams(armed),
    ]);
  }

  async endCountdown(
    id: string,
    state: "cancelled" | "expired",
    reason: string,
    now: number,
    audit: AuditValues,
  ): Promise<boolean> {
    const rows = await this.run<{ id: unknown }>(S.endCountdown, [id, state, reason, now, ...auditParams(audit)]);
    return whole(rows, ["id"]).length > 0;
  }

  async claimCountdown(id: string, owner: string, now: number): Promise<boolean> {
    return whole(await this.run<{ id: string }>(S.claimCountdown, [id, owner, now]), ["id"]).length > 0;
  }

  async takeOver(
    ids: readonly string[],
    expected: string | null,
    owner: string,
    leaseUntil: number,
  ): Promise<string[]> {
    const rows = await this.run<{ id: string }>(S.takeOver, [JSON.stringify(ids), expected, owner, leaseUntil]);
    return whole(rows, ["id"]).map(({ id }) => id);
  }

  async expireOrphans(ids: readonly string[], expected: string | null, reason: string, now: number): Promise<string[]> {
    const rows = await this.run<{ id: string }>(S.expireOrphans, [JSON.stringify(ids), expected, reason, now]);
    return whole(rows, ["id"]).map(({ id }) => id);
  }

  async renewLeases(owner: string, leaseUntil: number): Promise<number> {
    return Number(whole(await this.run<{ n: number }>(S.renewLeases, [owner, leaseUntil]), ["n"])[0]?.n ?? 0);
  }

  async releaseLeases(owner: string, scopes: readonly Scope[]): Promise<number> {
    const rows = await this.run<{ n: number }>(S.releaseLeases, [scopesAsJson(scopes), owner]);
    return Number(whole(rows, ["n"])[0]?.n ?? 0);
  }

  async injection(id: string): Promise<InjectionRow | undefined> {
    return whole(await this.run<InjectionRow>(S.injection, [id]), INJECTION)[0];
  }

  async insertInjection(i: NewInjection): Promise<void> {
    await this.run(S.insertInjection, [
      i.id,
      i.sessionId,
      i.countdownId,
      i.directory,
      i.server ?? null,
      i.messageId,
      i.createdAt,
      i.agent,
      i.model,
      i.variant,
      i.todosTotal,
      i.todosOpen,
      i.attempt,
      i.onSent ?? null,
      i.owner,
      i.leaseUntil,
    ]);
  }

  async finishInjection(
    id: string,
    status: "sent" | "failed" | "unknown",
    error: string | null,
    now: number,
  ): Promise<boolean> {
    return whole(await this.run<{ id: string }>(S.finishInjection, [id, status, error, now]), ["id"]).length > 0;
  }

  async confirmInjection(id: string, now: number): Promise<boolean> {
    return whole(await this.run<{ id: string }>(S.confirmInjection, [id, now]), ["id"]).length > 0;
  }

  async hasPendingInjection(sessionId: string): Promise<boolean> {
    return whole(await this.run<{ id: string }>(S.hasPendingInjection, [sessionId]), ["id"]).length > 0;
  }

  /** Fresh by the database's clock: `now` (this process's) says nothing across hosts. */
  async insertBill(bill: NewBill): Promise<boolean> {
    const written = await this.run<{ id: string }>(
      S.insertBill,
      BILL_KEYS.map((k) => bill[k] ?? null),
    );
    return whole(written, ["id"]).length > 0;
  }

  async spentSince(dayStart: number): Promise<number> {
    return Number((await this.run<{ cost: number }>(S.spentSince, [dayStart]))[0]?.cost ?? 0);
  }

  async unbilledOf(sessionId: string): Promise<string | undefined> {
    return whole(await this.run<{ id: string }>(S.unbilledOf, [sessionId]), ["id"])[0]?.id;
  }

  async unbilledIn(scope: Scope, since: number): Promise<Array<{ injectionId: string; sessionId: string }>> {
    return whole(await this.run<{ injectionId: string; sessionId: string }>(S.unbilledIn, [...scoped(scope), since]), [
      "injectionId",
      "sessionId",
    ]);
  }

  async recentBillsToday(dayStart: number, limit: number): Promise<Array<{ cost: number; tokens: number }>> {
    const rows = await this.run<{ cost: number; tokens: number }>(S.recentBillsToday, [dayStart, limit]);
    return rows.map((r) => ({ cost: Number(r.cost), tokens: Number(r.tokens) }));
  }

  async recentBills(sessionId: string, limit: number): Promise<Array<{ cost: number; tokens: number }>> {
    return (await this.run<{ cost: number; tokens: number }>(S.recentBills, [sessionId, limit])).map((r) => ({
      cost: Number(r.cost),
      tokens: Number(r.tokens),
    }));
  }

  async tuiWatching(directory: string): Promise<boolean> {
    return whole(await this.run<{ id: string }>(S.tuiWatching, [directory]), ["id"]).length > 0;
  }

  async continuedSince(sessionId: string, since: number, now: number): Promise<ContinuationRef | undefined> {
    const rows = await this.run<ContinuationRef>(S.continuedSince, [sessionId, ago(since, now)]);
    return whole(rows, ["injectionId", "firedAt"])[0];
  }

  async pendingIn(scope: Scope): Promise<InjectionRow[]> {
    return whole(await this.run<InjectionRow>(S.pendingIn, scoped(scope)), INJECTION);
  }

  async pendingInScopes(scopes: readonly Scope[]): Promise<InjectionRow[]> {
    return whole(await this.run<InjectionRow>(S.pendingInScopes, [scopesAsJson(scopes)]), INJECTION);
  }

  async uncertainIn(sessionId: string, since: number): Promise<InjectionRow[]> {
    return whole(await this.run<InjectionRow>(S.uncertainIn, [sessionId, since]), INJECTION);
  }

  async insertNotices(notices: NewNotice[]): Promise<void> {
    if (notices.length > 0) await this.run(N.insertNotices, [JSON.stringify(notices)]);
  }

  async claimNotices(
    scope: Scope,
    channels: readonly string[],
    owner: string,
    now: number,
    leaseMs: number,
    limit: number,
  ): Promise<NoticeRow[]> {
    const values = [...scoped(scope), JSON.stringify(channels), now, owner, leaseMs, limit];
    return whole(await this.run<NoticeRow>(N.claimNotices, values), NOTICE).sort(earliestDueFirst);
  }

  async settleNotice(id: string, owner: string, s: NoticeSettlement, now: number): Promise<boolean> {
    const values = [id, owner, s.state, s.attempts, s.nextAttemptAt, s.sentAt, s.lastError, s.body, now];
    return whole(await this.run<{ id: string }>(N.settleNotice, values), ["id"]).length > 0;
  }

  async pendingNoticesOf(sessionId: string, channel: string): Promise<NoticeRow[]> {
    return whole(await this.run<NoticeRow>(N.pendingNoticesOf, [sessionId, channel]), NOTICE);
  }

  async foldNotices(ids: readonly string[], into: string, now: number): Promise<number> {
    if (ids.length === 0) return 0;
    const rows = await this.run<{ n: number }>(N.foldNotices, [JSON.stringify(ids), into, now]);
    return Number(rows[0]?.n ?? 0);
  }

  async noticesSentSince(sessionId: string, channel: string, since: number): Promise<number[]> {
    const rows = await this.run<{ sentAt: number }>(N.noticesSentSince, [sessionId, channel, since]);
    return whole(rows, ["sentAt"]).map((r) => Number(r.sentAt));
  }

  /** Rows other transactions have locked are skipped rather than waited for (they are not history yet). */
  async deleteHistory(table: HistoryTable, settled: string, cutoff: number, limit: number): Promise<number> {
    const key = KEY[table];
    const text = `WITH gone AS (
      DELETE FROM ${table} WHERE ${key} IN (
        SELECT ${key} FROM ${table} WHERE ${settled.replace("?", "$1")} LIMIT $2 FOR UPDATE SKIP LOCKED)
      RETURNING 1)
    SELECT count(*)::int AS n FROM gone`;
    return Number((await this.run<{ n: number }>(statement(`prune_${table}`, text), [cutoff, limit]))[0]?.n ?? 0);
  }

  async countHistory(table: HistoryTable, settled: string, cutoff: number): Promise<number> {
    const text = `SELECT count(*)::int AS n FROM ${table} WHERE ${settled.replace("?", "$1")}`;
    return Number((await this.run<{ n: number }>(statement(`count_${table}`, text), [cutoff]))[0]?.n ?? 0);
  }
}
