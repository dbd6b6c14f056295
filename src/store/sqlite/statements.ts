// The statements of store/statements.ts over one SQLite connection, prepared once (prepared.ts) and answered
// synchronously: the store's runner drives a transaction script with them inside one BEGIN IMMEDIATE transaction.
// Every statement that changes a countdown or an injection names the state it expects, so that of two writers only
// one changes it.
import type { AuditValues } from "../audit-row.js";
import { ownerMayBeAlive } from "../owner.js";
import type { CountdownRow, InjectionRow, NewBill, NoticeRow, SessionRow } from "../schema.js";
import { PATCHABLE } from "../session-columns.js";
import { earliestDueFirst, scopesAsJson, type HistoryTable, type Statements } from "../statements.js";
import type {
  ArmedRef,
  ContinuationRef,
  NewCountdown,
  NewInjection,
  NewNotice,
  NoticeSettlement,
  Scope,
  SessionScope,
} from "../types.js";
import type { Db, RawDatabase } from "./connection.js";
import {
  CLAIM_NOTICES,
  claimParams,
  FOLD_NOTICES,
  INSERT_NOTICE,
  NOTICES_SENT_SINCE,
  PENDING_NOTICES_OF,
  SETTLE_NOTICE,
} from "./notice-sql.js";
import { BILL_KEYS, changes, EXPIRE_ORPHANS, prepareStatements, scoped, TAKE_OVER } from "./prepared.js";

export class SqliteStatements implements Statements {
  /** Each statement prepared once, under the name of the method it answers. */
  private readonly prepared;
  private insertNotice: { run(...params: unknown[]): { changes: number } } | undefined;

  constructor(
    db: Db,
    private readonly raw: RawDatabase,
  ) {
    this.prepared = prepareStatements(db, raw);
  }

  session(sessionId: string): SessionRow | undefined {
    return this.prepared.session.get({ sessionId });
  }

  insertSession(scope: SessionScope, now: number): void {
    this.prepared.insertSession.run({
      sessionId: scope.sessionId,
      directory: scope.directory,
      server: scope.server ?? null,
      now,
    });
  }

  writeSession(row: SessionRow): void {
    const values: Record<string, unknown> = { sessionId: row.sessionId, updatedAt: row.updatedAt };
    for (const key of PATCHABLE) values[key] = row[key] ?? null;
    this.prepared.writeSession.run(values);
  }

  addSpend(sessionId: string, cost: number, tokens: number, now: number): void {
    this.prepared.addSpend.run({ sessionId, cost, tokens, now });
  }

  sessionsToRecheck(scope: Scope, dueBy: number) {
    return this.prepared.sessionsToRecheck.all({ ...scoped(scope), dueBy });
  }

  sessionsToRecheckInScopes(scopes: readonly Scope[], dueBy: number) {
    return this.prepared.sessionsToRecheckInScopes.all({ scopes: scopesAsJson(scopes), dueBy });
  }

  audit({ at, sessionId, directory, server, event, reason, detail }: AuditValues): void {
    this.prepared.audit.run(at, sessionId, directory, server, event, reason, detail);
  }

  auditMany(rows: AuditValues[]): void {
    for (const row of rows) this.audit(row);
  }

  // One file, one host, one clock: the times every writer stamped compare as they are.
  userCancelledSince(sessionId: string, since: number): number | undefined {
    return this.prepared.userCancelledSince.get({ sessionId, since })?.at;
  }

  countdown(id: string): CountdownRow | undefined {
    return this.prepared.countdown.get({ id });
  }

  armedFor(sessionId: string): ArmedRef | undefined {
    return this.prepared.armedFor.get({ sessionId });
  }

  armedIn(scope: Scope): CountdownRow[] {
    return this.prepared.armedIn.all(scoped(scope));
  }

  armedInScopes(scopes: readonly Scope[]): CountdownRow[] {
    return this.prepared.armedInScopes.all({ scopes: scopesAsJson(scopes) });
  }

  /** Alive unless certainly gone (same host, no such pid), and only while its lease has not run out. */
  ownerAlive(owner: string | null, leaseUntil: number | null, now: number): boolean {
    return ownerMayBeAlive(owner) && (leaseUntil ?? 0) >= now;
  }

  insertCountdown(countdown: NewCountdown, armed: AuditValues): void {
    this.prepared.insertCountdown.run({ ...countdown, server: countdown.server ?? null });
    this.audit(armed);
  }

  endCountdown(id: string, state: "cancelled" | "expired", reason: string, now: number, audit: AuditValues): boolean {
    if (changes(this.prepared.endCountdown.run({ id, state, now, reason })) === 0) return false;
    this.audit(audit);
    return true;
  }

  claimCountdown(id: string, owner: string, now: number): boolean {
    return changes(this.prepared.claimCountdown.run({ id, owner, now })) > 0;
  }

  takeOver(ids: readonly string[], expected: string | null, owner: string, leaseUntil: number): string[] {
    const taken = this.raw.all<{ id: string }>(TAKE_OVER, owner, leaseUntil, expected, JSON.stringify(ids));
    return taken.map(({ id }) => id);
  }

  expireOrphans(ids: readonly string[], expected: string | null, reason: string, now: number): string[] {
    const expired = this.raw.all<{ id: string }>(EXPIRE_ORPHANS, now, reason, expected, JSON.stringify(ids));
    return expired.map(({ id }) => id);
  }

  renewLeases(owner: string, leaseUntil: number): number {
    return changes(this.prepared.renewLeases.run({ owner, leaseUntil }));
  }

  releaseLeases(owner: string, scopes: readonly Scope[]): number {
    return changes(this.prepared.releaseLeases.run({ owner, scopes: scopesAsJson(scopes) }));
  }

  injection(id: string): InjectionRow | undefined {
    return this.prepared.injection.get({ id });
  }

  insertInjection(injection: NewInjection): void {
    this.prepared.insertInjection.run({ onSent: null, ...injection, server: injection.server ?? null });
  }

  finishInjection(id: string, status: "sent" | "failed" | "unknown", error: string | null, now: number): boolean {
    return changes(this.prepared.finishInjection.run({ id, status, error, now })) > 0;
  }

  confirmInjection(id: string, now: number): boolean {
    return changes(this.prepared.confirmInjection.run({ id, now })) > 0;
  }

  hasPendingInjection(sessionId: string): boolean {
    return this.prepared.hasPendingInjection.get({ sessionId }) !== undefined;
  }

  insertBill(bill: NewBill): boolean {
    return this.prepared.insertBill.run(...BILL_KEYS.map((k) => bill[k] ?? null)).changes > 0;
  }

  spentSince(dayStart: number): number {
    return this.prepared.spentSince.get({ since: dayStart })?.cost ?? 0;
  }

  recentBillsToday(dayStart: number, limit: number): Array<{ cost: number; tokens: number }> {
    return this.prepared.recentBillsToday.all({ since: dayStart, limit });
  }

  recentBills(sessionId: string, limit: number): Array<{ cost: number; tokens: number }> {
    return this.prepared.recentBills.all({ sessionId, limit });
  }

  unbilledOf(sessionId: string): string | undefined {
    const latest = this.prepared.unbilledOf.get({ sessionId });
    return latest && !latest.billed ? latest.id : undefined;
  }

  unbilledIn(scope: Scope, since: number): Array<{ injectionId: string; sessionId: string }> {
    return this.prepared.unbilledIn.all({ ...scoped(scope), since });
  }

  tuiWatching(directory: string, now: number): boolean {
    return this.prepared.tuiWatching.get({ directory, now }) !== undefined;
  }

  continuedSince(sessionId: string, since: number): ContinuationRef | undefined {
    return this.prepared.continuedSince.get({ sessionId, since });
  }

  pendingIn(scope: Scope): InjectionRow[] {
    return this.prepared.pendingIn.all(scoped(scope));
  }

  pendingInScopes(scopes: readonly Scope[]): InjectionRow[] {
    return this.prepared.pendingInScopes.all({ scopes: scopesAsJson(scopes) });
  }

  uncertainIn(sessionId: string, since: number): InjectionRow[] {
    return this.prepared.uncertainIn.all({ sessionId, since });
  }

  insertNotices(notices: NewNotice[]): void {
    // Prepared once, on first use: a stop that tells writes a row per channel, and a stop is on a session's path.
    this.insertNotice ??= this.raw.prepare(INSERT_NOTICE);
    for (const n of notices)
      this.insertNotice.run(
        n.id,
        n.noticeId,
        n.sessionId,
        n.directory,
        n.server ?? null,
        n.channel,
        n.kind,
        n.reason,
        n.createdAt,
        n.body,
        n.createdAt,
        n.createdAt,
      );
  }

  claimNotices(
    scope: Scope,
    channels: readonly string[],
    owner: string,
    now: number,
    leaseMs: number,
    limit: number,
  ): NoticeRow[] {
    const taken = this.raw.all<NoticeRow>(CLAIM_NOTICES, ...claimParams(scope, channels, owner, now, leaseMs, limit));
    return taken.sort(earliestDueFirst);
  }

  settleNotice(id: string, owner: string, s: NoticeSettlement, now: number): boolean {
    const { state, attempts, nextAttemptAt, sentAt, lastError, body } = s;
    return (
      this.raw.run(SETTLE_NOTICE, state, attempts, nextAttemptAt, sentAt, lastError, body, now, id, owner).changes > 0
    );
  }

  pendingNoticesOf(sessionId: string, channel: string): NoticeRow[] {
    return this.raw.all<NoticeRow>(PENDING_NOTICES_OF, sessionId, channel);
  }

  foldNotices(ids: readonly string[], into: string, now: number): number {
    return ids.length === 0 ? 0 : this.raw.run(FOLD_NOTICES, into, now, JSON.stringify(ids)).changes;
  }

  noticesSentSince(sessionId: string, channel: string, since: number): number[] {
    return this.raw.all<{ sentAt: number }>(NOTICES_SENT_SINCE, sessionId, since, channel).map((r) => r.sentAt);
  }

  deleteHistory(table: HistoryTable, settled: string, cutoff: number, limit: number): number {
    return this.raw.run(
      `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${settled} LIMIT ?)`,
      cutoff,
      limit,
    ).changes;
  }

  countHistory(table: HistoryTable, settled: string, cutoff: number): number {
    return this.raw.all<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${settled}`, cutoff)[0]?.n ?? 0;
  }
}
