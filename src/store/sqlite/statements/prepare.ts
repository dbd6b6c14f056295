// What every SQLite statement is written with: what it is prepared on, and the pieces of SQL several share.
import { and, eq, sql } from "drizzle-orm";
import { countdowns, injections, parks, sessions, verifications } from "../../schema.js";
import type { Statements } from "../../statements.js";
import type { Scope } from "../../types.js";
import type { Db, RawDatabase } from "../connection.js";

/** What a statement is prepared on: drizzle, the driver beneath it, and the connection's other statements. */
export interface Connection {
  db: Db;
  raw: RawDatabase;
  /** Filled once every statement is prepared: for use when a statement runs, never while it is prepared. */
  statements: Statements;
}

/**
 * One statement of ../../statements.ts on SQLite: prepares its SQL on a connection, once, and gives back the function
 * that runs it (binding only).
 */
export type Prepare<K extends keyof Statements> = (c: Connection) => Statements[K];

/** Some of the statements, each under the name of the one it answers. */
export type SomePrepared = { readonly [K in keyof Statements]?: Prepare<K> };

export const p = (name: string) => sql.placeholder(name);
/** Each column bound to the parameter of the same name. */
export const placeholders = <K extends string>(...names: K[]) =>
  Object.fromEntries(names.map((name) => [name, p(name)])) as Record<K, ReturnType<typeof p>>;
/** `set()` takes SQL rather than bare placeholders; the value is still bound when the prepared statement runs. */
export const ps = (name: string) => sql`${sql.placeholder(name)}`;

// SQLite re-plans a statement at every run when a bound value can change its plan: the value a partial index names,
// and a LIMIT. So `state = 'armed'` (countdowns_one_armed_per_session) is written into the SQL, never bound, and a
// statement read with `get()` has no LIMIT (get() steps to the first row and stops). Bound, each one added 4–7 µs of
// CPU to every run of a 3 µs look-up.
export const isArmed = sql`${countdowns.state} = 'armed'`;

/** The tables whose rows carry a scope (a directory on a server). */
type Scoped = typeof sessions | typeof countdowns | typeof parks | typeof injections | typeof verifications;

/** A row's scope: its directory on its server (NULL, a machine's own, matches NULL). */
export const inScope = (table: Scoped) =>
  and(eq(table.directory, p("directory")), sql`${table.server} IS ${p("server")}`);

/**
 * A row of any of several scopes, bound as one JSON array of `[directory, server]` pairs (../../statements.ts
 * `scopesAsJson`): what a fleet replica reads for all its servers at once.
 */
export const inScopes = (table: Scoped) =>
  sql`EXISTS (SELECT 1 FROM json_each(${p("scopes")}) AS scope
    WHERE scope.value ->> 0 = ${table.directory} AND scope.value ->> 1 IS ${table.server})`;

export const changes = (result: unknown) => (result as { changes: number }).changes;
export const scoped = (scope: Scope) => ({ directory: scope.directory, server: scope.server ?? null });
