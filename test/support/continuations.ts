// What another process leaves in the file for an engine collaborator to find: a continuation it fired (its countdown
// armed and claimed, as the injector does) and maybe settled, and a countdown the TUI's key cancelled. Written with
// the same state changes the engine and the TUI use, through whichever store the test gives (a second connection to
// the same file stands for another process).
import type { Config } from "../../src/config/resolve.js";
import { arm } from "../../src/store/changes/arm.js";
import { cancelByKey } from "../../src/store/changes/cancel-by-key.js";
import { claim } from "../../src/store/changes/claim.js";
import { recordOutcome, type Outcome } from "../../src/store/changes/record-outcome.js";
import type { EngineStore, NewInjection } from "../../src/store/port.js";
import { DIRECTORY } from "./engine-fixture.js";

let seq = 0;

export interface Fired {
  sessionId: string;
  owner: string;
  /** When it was fired (its `created_at`); now by default. */
  firedAt?: number;
  /** Left `pending` (the default: its call is under way), or settled. */
  settled?: "sent" | "failed" | "unknown";
  directory?: string;
}

/** A continuation `claimContinuation` plants: its countdown and injection, and their message, named after `key`. */
export interface Claimed {
  key: string;
  sessionId: string;
  directory: string;
  owner: string;
  armedAt: number;
  /** The countdown's deadline, when its continuation was made (`created_at`). */
  firedAt: number;
  /** How many todos were open, of as many. */
  todos: number;
  leases: { countdown: number; injection: number };
  messageId?: string;
  onSent?: string | null;
}

/**
 * A countdown `owner` armed and claimed at its deadline (`cd_<key>`): its continuation (`inj_<key>`, message
 * `msg_<key>`) recorded `pending`, as an injector records one before its prompt call.
 */
export async function claimContinuation(store: EngineStore, c: Claimed): Promise<NewInjection> {
  const { sessionId, directory, owner } = c;
  const countdownId = `cd_${c.key}`;
  const todos = { todosOpen: c.todos, todosTotal: c.todos };
  const countdown = { id: countdownId, sessionId, directory, owner, attempt: 0, ...todos };
  await store.change(
    arm({ ...countdown, armedAt: c.armedAt, deadlineAt: c.firedAt, leaseUntil: c.leases.countdown }, {}),
  );
  const injection: NewInjection = {
    id: `inj_${c.key}`,
    sessionId,
    directory,
    countdownId,
    messageId: c.messageId ?? `msg_${c.key}`,
    createdAt: c.firedAt,
    agent: "build",
    model: null,
    variant: null,
    ...todos,
    attempt: 0,
    ...(c.onSent === undefined ? {} : { onSent: c.onSent }),
    owner,
    leaseUntil: c.leases.injection,
  };
  if (!(await store.change(claim(injection, {})))) throw new Error("the planted countdown could not be claimed");
  return injection;
}

/** A continuation fired by `owner`, as its injector records one; settled when asked (with `config`'s retry policy). */
export async function fireContinuation(store: EngineStore, fired: Fired, config?: Config): Promise<NewInjection> {
  const firedAt = fired.firedAt ?? Date.now();
  const injection = await claimContinuation(store, {
    key: `elsewhere_${++seq}`,
    sessionId: fired.sessionId,
    directory: fired.directory ?? DIRECTORY,
    owner: fired.owner,
    armedAt: firedAt - 2000,
    firedAt,
    todos: 1,
    leases: { countdown: firedAt + 60_000, injection: firedAt + 60_000 },
  });
  if (fired.settled) {
    if (!config) throw new Error("settling a continuation takes the retry policy");
    const outcomes: Record<NonNullable<Fired["settled"]>, Outcome> = {
      sent: { kind: "sent", latencyMs: 20, detail: {} },
      failed: { kind: "failed", error: "refused", final: false, detail: {} },
      unknown: { kind: "unknown", error: "reset", timedOut: false, final: false, detail: {} },
    };
    await store.change(recordOutcome(injection, outcomes[fired.settled], firedAt + 20, config));
  }
  return injection;
}

/**
 * A person pressed the TUI's key for the session at `at` (now by default): the countdown `owner` armed for it is
 * cancelled `user_key`, as the TUI writes it.
 */
export async function pressCancelKey(
  store: EngineStore,
  sessionId: string,
  owner: string,
  at = Date.now(),
  directory = DIRECTORY,
): Promise<void> {
  const countdownId = `cd_keyed_${++seq}`;
  await store.change(
    arm(
      {
        id: countdownId,
        sessionId,
        directory,
        armedAt: at - 500,
        deadlineAt: at + 1500,
        owner,
        leaseUntil: at + 60_000,
        attempt: 0,
        todosOpen: 1,
        todosTotal: 1,
      },
      {},
    ),
  );
  if (!(await store.change(cancelByKey({ sessionId, directory }, at, { source: "tui" }))))
    throw new Error("the key found no countdown to cancel");
}
