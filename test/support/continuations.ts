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

/** A continuation fired by `owner`, as its injector records one; settled when asked (with `config`'s retry policy). */
export async function fireContinuation(store: EngineStore, fired: Fired, config?: Config): Promise<NewInjection> {
  const { sessionId, owner } = fired;
  const directory = fired.directory ?? DIRECTORY;
  const firedAt = fired.firedAt ?? Date.now();
  const n = ++seq;
  const countdownId = `cd_elsewhere_${n}`;
  await store.change(
    arm(
      {
        id: countdownId,
        sessionId,
        directory,
        armedAt: firedAt - 2000,
        deadlineAt: firedAt,
        owner,
        leaseUntil: firedAt + 60_000,
        attempt: 0,
        todosOpen: 1,
        todosTotal: 1,
      },
      {},
    ),
  );
  const injection: NewInjection = {
    id: `inj_elsewhere_${n}`,
    sessionId,
    directory,
    countdownId,
    messageId: `msg_elsewhere_${n}`,
    createdAt: firedAt,
    agent: "build",
    model: null,
    variant: null,
    todosTotal: 1,
    todosOpen: 1,
    attempt: 0,
    owner,
    leaseUntil: firedAt + 60_000,
  };
  if (!(await store.change(claim(injection, {})))) throw new Error("the planted countdown could not be claimed");
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
