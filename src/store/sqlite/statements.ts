// The statements of store/statements.ts over one SQLite connection, each prepared once and answered synchronously:
// the store's runner drives a transaction script with them inside one BEGIN IMMEDIATE transaction. Each is written
// once, its SQL beside the code that runs it, in the file of its topic (statements/).
import type { Statements } from "../statements.js";
import type { Db, RawDatabase } from "./connection.js";
import { AUDIT } from "./statements/audit.js";
import { BILLS } from "./statements/bills.js";
import { COUNTDOWNS } from "./statements/countdowns.js";
import { INJECTIONS } from "./statements/injections.js";
import { NOTICES } from "./statements/notices.js";
import { PARKS } from "./statements/parks.js";
import type { Connection, Prepare } from "./statements/prepare.js";
import { REPLICAS } from "./statements/replicas.js";
import { RETENTION } from "./statements/retention.js";
import { SESSIONS } from "./statements/sessions.js";
import { VERIFICATIONS } from "./statements/verifications.js";

/** Every statement: a database that lacks one does not compile. */
const PREPARE = {
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
} satisfies { readonly [K in keyof Statements]: Prepare<K> };

/** The statements of one connection, each prepared once, under the name of the statement it answers. */
export function prepareStatements(db: Db, raw: RawDatabase): Statements {
  const statements: Record<string, unknown> = {};
  const connection: Connection = { db, raw, statements: statements as unknown as Statements };
  for (const [name, prepare] of Object.entries(PREPARE))
    statements[name] = (prepare as (c: Connection) => unknown)(connection);
  return connection.statements;
}
