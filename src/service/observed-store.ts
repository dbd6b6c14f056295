// The store as the service runs it: the same store, each state change and read timed, and the audit rows and bills a
// state change wrote handed to the metrics once its transaction committed. A change PostgreSQL runs again (its
// transaction failed and was retried) reports only the attempt that committed; one that failed reports nothing.
import type { EngineStore } from "../store/port.js";
import type { Change, Script, Statement } from "../store/script.js";
import type { AuditValues } from "../store/audit-row.js";
import type { NewBill } from "../store/schema.js";
import type { Committed, Metrics } from "./metrics.js";

/**
 * The audit rows a statement wrote, by what it was given and what it answered: the statements that write one (see
 * statements.ts: a write and the audit row that explains it are one unit of work).
 */
export const AUDIT_ROWS: {
  readonly [K in Statement["name"]]?: (args: readonly unknown[], result: unknown) => AuditValues[];
} = {
  audit: (args) => [args[0] as AuditValues],
  auditMany: (args) => args[0] as AuditValues[],
  insertCountdown: (args) => [args[1] as AuditValues],
  endCountdown: (args, ended) => (ended === true ? [args[4] as AuditValues] : []),
  insertPark: (args, inserted) => (inserted === true ? [args[1] as AuditValues] : []),
  reparkPark: (args, reparked) => (reparked === true ? [args[2] as AuditValues] : []),
  insertVerification: (args, inserted) => (inserted === true ? [args[1] as AuditValues] : []),
};

/** Runs `script`, noting what it writes that the metrics count. */
function* recording<T>(script: Script<T>, seen: Committed): Script<T> {
  let step = script.next();
  while (!step.done) {
    const statement: Statement = step.value;
    const result: unknown = yield statement;
    const audited = AUDIT_ROWS[statement.name];
    if (audited) seen.audit.push(...audited(statement.args, result));
    else if (statement.name === "insertBill" && result === true) seen.bills.push(statement.args[0] as NewBill);
    step = script.next(result);
  }
  return step.value;
}

const since = (started: number) => (performance.now() - started) / 1000;

/** `store`, observed by `metrics`; every other method is the store's own. */
export function observeStore<S extends EngineStore>(store: S, metrics: Metrics): S {
  async function change<T>(c: Change<T>): Promise<T> {
    let seen: Committed = { audit: [], bills: [] };
    const started = performance.now();
    let result: T;
    try {
      result = await store.change({ ...c, script: () => recording(c.script(), (seen = { audit: [], bills: [] })) });
    } catch (error) {
      metrics.storeCall(c.name, since(started), true);
      throw error;
    }
    // Committed: whatever the metrics make of it, the change has happened and its caller must hear so.
    try {
      metrics.storeCall(c.name, since(started), false);
      metrics.committed(seen);
    } catch {
      // A metric that cannot be counted is a lost sample, not a failed state change.
    }
    return result;
  }
  async function read<T>(script: Script<T>): Promise<T> {
    const started = performance.now();
    try {
      const result = await store.read(script);
      metrics.storeCall("read", since(started), false);
      return result;
    } catch (error) {
      metrics.storeCall("read", since(started), true);
      throw error;
    }
  }
  return new Proxy(store, {
    get(target, key) {
      if (key === "change") return change;
      if (key === "read") return read;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
