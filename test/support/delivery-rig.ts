// The engine's delivery group (src/engine/deliver/) wired as the enforcer wires it (src/engine/parts.ts), over the
// engine's context and a real SQLite file, on fake timers: a due countdown goes to the injector, and a session to be
// looked at again is only recorded (no looks, no toasts). One rig per
// test, for the tests of the injector, the outcomes, the reconciler and the start watch.
//
// `store`, `rows` and `rig` are live bindings: `useDeliveryRig()` opens a fresh file before each test (parts-rig's
// `useParts`) and `build()` wires a fresh rig, so a test file imports them once and reads them as its own.
import { join } from "node:path";
import { vi } from "vitest";
import type { Config } from "../../src/config/resolve.js";
import type { Countdowns } from "../../src/engine/wait/countdowns.js";
import type { FactGatherer } from "../../src/engine/read/facts.js";
import type { Injector } from "../../src/engine/deliver/injector.js";
import type { Lookups } from "../../src/engine/deliver/lookups.js";
import type { Outcomes } from "../../src/engine/deliver/outcomes.js";
import type { DeliveryQueue } from "../../src/engine/wait/queue.js";
import type { Reconciler } from "../../src/engine/deliver/reconciler.js";
import type { StartWatch } from "../../src/engine/deliver/start-watch.js";
import type { SessionMemories } from "../../src/engine/memory/session-memory.js";
import type { PromptRequest } from "../../src/host/port.js";
import { changeSession } from "../../src/store/changes/change-session.js";
import { folder, quiet, rows, store, type TestContext } from "./engine-context.js";
import { buildPartsRig, useParts } from "./parts-rig.js";
import { claimContinuation } from "./continuations.js";
import { DIRECTORY, testConfig } from "./engine-fixture.js";
import { FakeHost } from "./fake-host.js";
import { advance } from "./fake-time.js";

export { rows, store } from "./engine-context.js";

/** The session every rig is built around: a user asked for something and two todos are open. */
export const S = "ses_delivery";
/** What a retry that is not armed was for (only its `armed` row would say it). */
export const GIVE_UP = { retryOf: "inj_x", reason: "backoff" } as const;
export const BASE_MS = 1000;

export let rig: Rig;

export interface Rig {
  ctx: TestContext;
  host: FakeHost;
  countdowns: Countdowns;
  queue: DeliveryQueue;
  injector: Injector;
  outcomes: Outcomes;
  reconciler: Reconciler;
  starts: StartWatch;
  lookups: Lookups;
  facts: FactGatherer;
  memories: SessionMemories;
  /** Sessions the injector asked to look at again. */
  looks: string[];
}

/** Fake timers from START and a fresh SQLite file for every test of the file; the rig stopped after each. */
export function useDeliveryRig(): void {
  useParts();
}

/** The delivery parts as the enforcer builds them (engine/parts.ts); only a due countdown is routed (to the injector). */
export function build(overrides: Partial<Config> = {}, owner?: string): Rig {
  const config = testConfig(join(folder, "state.db"), {
    retryBaseMs: BASE_MS,
    retryMaxMs: 8000,
    maxRetries: 3,
    toast: true,
    ...overrides,
  });
  const host = new FakeHost();
  host.addUserMessage(S, "build the thing");
  host.setTodos(S, [
    ["a", "pending"],
    ["b", "pending"],
  ]);
  const { ctx, parts } = buildPartsRig({ config, host, owner });
  const { countdowns, queue, injector, outcomes, reconciler, starts, lookups, facts, memories } = parts;
  // The delivery group's tests stop where it hands a session back to be looked at again: recorded, not looked at.
  const looks: string[] = [];
  vi.spyOn(parts.looks, "evaluate").mockImplementation(async (sessionId: string) => void looks.push(sessionId));
  rig = { ctx, host, countdowns, queue, injector, outcomes, reconciler, starts, lookups, facts, memories, looks };
  return rig;
}

/** Lets `ms` pass, then waits for every attempt and state change under way. */
export async function pass(ms = 0) {
  await advance(ms);
  await quiet(rig.ctx, () => rig.queue.drain());
}

/** A countdown of S that is due at once: the attempt under test starts. */
export async function attempt(attemptNo = 0) {
  await rig.countdowns.arm({ sessionId: S, attempt: attemptNo, delayMs: 0, detail: { trigger: "test" } });
}

export const failures = () => rows.audit(S).filter((r) => r.event === "injection_failed");
export const armed = () => rows.countdowns(S).filter((c) => c.state === "armed");
export const presetFailures = (n: number) =>
  store.change(changeSession({ sessionId: S, directory: DIRECTORY }, Date.now(), { consecutiveFailures: n }));

/** A prompt call that fails with `error` after OpenCode may (or may not) have written the message. */
export function promptThat(error: Error, write?: (request: PromptRequest) => void) {
  const requests: PromptRequest[] = [];
  rig.host.prompt = async (request) => {
    rig.host.calls.prompt++;
    requests.push(request);
    write?.(request);
    throw error;
  };
  return requests;
}

/** A `pending` continuation that `owner` recorded and did not settle (it died, or is still calling). */
export async function pendingLeftBy(
  owner: string,
  options: { leaseUntil?: number; messageId?: string; onSent?: string; sessionId?: string } = {},
) {
  const sessionId = options.sessionId ?? S;
  const now = Date.now();
  return claimContinuation(store, {
    key: `left_${sessionId}`,
    sessionId,
    directory: DIRECTORY,
    owner,
    armedAt: now - 5000,
    firedAt: now - 3000,
    todos: 2,
    leases: { countdown: now + 60_000, injection: options.leaseUntil ?? now + 60_000 },
    messageId: options.messageId,
    onSent: options.onSent ?? null,
  });
}
