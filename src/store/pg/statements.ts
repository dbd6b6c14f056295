// The statements of store/statements.ts on PostgreSQL, each written once, its SQL beside the code that runs it, in the
// file of its topic (statements/). Under node-postgres each is prepared once per connection, by name (the driver
// parses a name once, then only binds). Measured on this project's 2-core machine: drizzle's query builder spent
// 100–200 µs of CPU building each insert, and PostgreSQL ~100 µs parsing and planning each unnamed statement, together
// more than running them.
import type { Statement as ScriptStatement } from "../script.js";
import type { Statements } from "../statements.js";
import type { PgDb } from "./connection.js";
import type { LiveOwners } from "./live-owners.js";
import { exec, statement, type Statement } from "./prepared.js";
import { AUDIT } from "./statements/audit.js";
import { BILLS } from "./statements/bills.js";
import { COUNTDOWNS } from "./statements/countdowns.js";
import { INJECTIONS } from "./statements/injections.js";
import { NOTICES } from "./statements/notices.js";
import { PARKS } from "./statements/parks.js";
import { REPLICAS } from "./statements/replicas.js";
import { RETENTION } from "./statements/retention.js";
import { SESSIONS } from "./statements/sessions.js";
import { VERIFICATIONS } from "./statements/verifications.js";
import type { PgCall, PgStatement } from "./statements/statement.js";

/** Every statement: a database that lacks one does not compile. */
const STATEMENTS: { readonly [K in keyof Statements]: PgStatement<K> } = {
  ...SESSIONS,
  ...AUDIT,
  ...COUNTDOWNS,
  ...PARKS,
  ...VERIFICATIONS,
  ...INJECTIONS,
  ...BILLS,
  ...NOTICES,
  ...REPLICAS,
  ...RETENTION,
};

/** Each statement's SQL under its server-side name: the statement's own, in snake case. */
const NAMED = Object.fromEntries(
  Object.entries(STATEMENTS).flatMap(([name, { sql }]) =>
    sql === undefined
      ? []
      : [
          [
            name,
            statement(
              name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
              sql,
            ),
          ],
        ],
  ),
) as Partial<Record<keyof Statements, Statement>>;

class Call implements PgCall {
  constructor(
    private readonly db: PgDb,
    readonly liveOwners: LiveOwners,
    private readonly own: Statement | undefined,
  ) {}

  rows<T>(values: readonly unknown[]): Promise<T[]> {
    if (!this.own) throw new Error("this statement has no SQL of its own");
    return exec<T>(this.db, this.own, values);
  }

  rowsOf<T>(statement: Statement, values: readonly unknown[]): Promise<T[]> {
    return exec<T>(this.db, statement, values);
  }
}

type Run = (c: PgCall, ...args: unknown[]) => Promise<unknown>;

/** Runs a script's statements on `db` (the pool, or one transaction), one at a time. */
export function runOn(db: PgDb, liveOwners: LiveOwners): (s: ScriptStatement) => Promise<unknown> {
  return ({ name, args }) => (STATEMENTS[name].run as Run)(new Call(db, liveOwners, NAMED[name]), ...args);
}
