// Transaction scripts: every durable state change is written once, as a generator that yields the statements it needs
// (statements.ts) and receives their results, and it runs on either database. On SQLite a synchronous runner drives it
// inside one BEGIN IMMEDIATE transaction; on PostgreSQL an asynchronous runner drives it inside a transaction holding
// its session's lock. The script reads, decides and writes in the order it is written, and never knows which.
//
//   function* stop(scope, source, now) {
//     const row = yield* ensureSession(scope, now);
//     if (row.stoppedAt != null) return { changed: false };
//     yield* q.writeSession({ ...row, stoppedAt: now, stopSource: source, updatedAt: now });
//     …
//   }
import type { Statements } from "./statements.js";

/** One statement a script asks its backend to run. */
export type Statement = {
  [K in keyof Statements]: { readonly name: K; readonly args: Parameters<Statements[K]> };
}[keyof Statements];

/** A transaction script: yields statements, gets each one's result back, returns its outcome. */
export type Script<T> = Generator<Statement, T, unknown>;

/** A durable state change, ready to run: its script, and the session it changes (whose lock PostgreSQL holds). */
export interface Change<T> {
  /** Which change it is: the name of its file in changes/ (`arm`, `claim`, `record-outcome`…). */
  readonly name: string;
  /** The session whose changes it serializes with (on PostgreSQL, a transaction-scoped advisory lock). */
  readonly session?: string;
  script(): Script<T>;
}

export function change<T>(name: string, session: string | undefined, script: () => Script<T>): Change<T> {
  return { name, session, script };
}

type Verbs = {
  [K in keyof Statements]: (...args: Parameters<Statements[K]>) => Script<ReturnType<Statements[K]>>;
};

const verb = (name: string) =>
  function* (...args: unknown[]): Generator<Statement, unknown, unknown> {
    return yield { name, args } as Statement;
  };

/**
 * The statements as a script uses them: `const row = yield* q.session(id)`. Each verb is made at its first use and kept
 * as the object's own property (its prototype answers a name it has not seen yet, once), so the names live only in the
 * interface: no list of them to keep beside it. An object's own names (`toString`…) and `then` stay what they are
 * elsewhere: `q` is never taken for a promise.
 */
export const q = Object.create(
  new Proxy(
    {},
    {
      get(target, name, receiver) {
        if (typeof name !== "string" || name === "then" || name in target) return Reflect.get(target, name, receiver);
        const made = verb(name);
        Object.defineProperty(receiver, name, { value: made, enumerable: true });
        return made;
      },
    },
  ),
) as Verbs;

type Call = (...args: unknown[]) => unknown;

/** Drives `script` with statements that answer at once (SQLite): returns what it returns, throws what they throw. */
export function runSync<T>(script: Script<T>, statements: Statements): T {
  let step = script.next();
  while (!step.done) {
    const { name, args } = step.value;
    step = script.next((statements[name] as Call)(...args));
  }
  return step.value;
}

/** Drives `script` with statements that answer later (PostgreSQL), run by `run` one at a time, in order. */
export async function runAsync<T>(script: Script<T>, run: (statement: Statement) => Promise<unknown>): Promise<T> {
  let step = script.next();
  while (!step.done) step = script.next(await run(step.value));
  return step.value;
}
