// DeliveryQueue promises: the attempts of one session run one at a time, in the order they were added; attempts of
// different sessions run side by side, at most `maxConcurrent` at once in the process; a session is busy while an
// attempt of it is queued or running, and no longer once they are done; an attempt that rejects is reported to
// `onError` and the queue goes on; stopQueued() drops the attempts not started yet (those waiting behind their
// session's running one and those waiting for the global cap) while the running ones finish; drain() resolves once
// every attempt queued or running has finished, after stopQueued() too. Pure: no store, no host, real timers.
import { describe, expect, it } from "vitest";
import { DeliveryQueue } from "../../../src/engine/wait/queue.js";
import { deferred, type Deferred } from "../../support/deferred.js";
import { afterTurns, turn } from "../../support/wait-for.js";

/**
 * A queue whose attempts say when they start and end and hold until the test lets them go, counting how many run at
 * once in the process and per session.
 */
function probe(maxConcurrent: number) {
  const errors: unknown[] = [];
  const queue = new DeliveryQueue(maxConcurrent, (error) => void errors.push(error));
  const log: string[] = [];
  const gates = new Map<string, Deferred>();
  const running = new Map<string, number>();
  let active = 0;
  const peak = { global: 0, perSession: 0 };
  const add = (sessionId: string, name: string, fail?: Error) => {
    gates.set(name, deferred());
    queue.add(sessionId, async () => {
      log.push(`${name}:start`);
      active++;
      running.set(sessionId, (running.get(sessionId) ?? 0) + 1);
      peak.global = Math.max(peak.global, active);
      peak.perSession = Math.max(peak.perSession, running.get(sessionId)!);
      await gates.get(name)!.promise;
      active--;
      running.set(sessionId, running.get(sessionId)! - 1);
      log.push(`${name}:end`);
      if (fail) throw fail;
    });
  };
  const release = (name: string) => gates.get(name)!.resolve();
  const started = (name: string) => log.includes(`${name}:start`);
  return { queue, errors, log, peak, add, release, started };
}

describe("one session", () => {
  it("runs its attempts one at a time, in the order they were added", async () => {
    const p = probe(8);
    p.add("ses_a", "first");
    p.add("ses_a", "second");
    p.add("ses_a", "third");
    await afterTurns(() => p.started("first"));
    await turn();
    expect(p.log).toEqual(["first:start"]);
    p.release("first");
    await afterTurns(() => p.started("second"));
    p.release("second");
    p.release("third");
    await p.queue.drain();
    expect(p.log).toEqual(["first:start", "first:end", "second:start", "second:end", "third:start", "third:end"]);
    expect(p.peak.perSession).toBe(1);
  });

  it("is busy while an attempt is queued or running, and no longer once they are done", async () => {
    const p = probe(8);
    expect(p.queue.isBusy("ses_a")).toBe(false);
    p.add("ses_a", "first");
    // Busy from the moment it is added, before it had a chance to start.
    expect(p.queue.isBusy("ses_a")).toBe(true);
    p.add("ses_a", "second");
    await afterTurns(() => p.started("first"));
    expect(p.queue.isBusy("ses_a")).toBe(true);
    expect(p.queue.isBusy("ses_b")).toBe(false);
    p.release("first");
    await afterTurns(() => p.started("second"));
    expect(p.queue.isBusy("ses_a")).toBe(true);
    p.release("second");
    await p.queue.drain();
    expect(p.queue.isBusy("ses_a")).toBe(false);
  });

  it("an attempt that rejects goes to onError, and the session's next attempt still runs", async () => {
    const p = probe(8);
    const boom = new Error("prompt exploded");
    p.add("ses_a", "failing", boom);
    p.add("ses_a", "next");
    p.release("failing");
    p.release("next");
    await p.queue.drain();
    expect(p.errors).toEqual([boom]);
    expect(p.log).toEqual(["failing:start", "failing:end", "next:start", "next:end"]);
    expect(p.queue.isBusy("ses_a")).toBe(false);
  });
});

describe("several sessions", () => {
  it("run side by side up to the global cap; the next starts when one finishes", async () => {
    const p = probe(2);
    p.add("ses_a", "a");
    p.add("ses_b", "b");
    p.add("ses_c", "c");
    await afterTurns(() => p.started("a") && p.started("b"));
    await turn();
    expect(p.started("c")).toBe(false);
    // Waiting for the cap, it is queued: its session is busy.
    expect(p.queue.isBusy("ses_c")).toBe(true);
    p.release("b");
    await afterTurns(() => p.started("c"));
    expect(p.log).toEqual(["a:start", "b:start", "b:end", "c:start"]);
    p.release("a");
    p.release("c");
    await p.queue.drain();
    expect(p.peak.global).toBe(2);
  });
});

describe("stopping", () => {
  it("stopQueued drops the attempts not started, lets the running one finish, and drain() still resolves", async () => {
    const p = probe(1);
    p.add("ses_a", "running");
    // Behind its session's running attempt.
    p.add("ses_a", "queued_behind");
    // Its session is free, but the global cap (1) is taken.
    p.add("ses_b", "waiting_for_cap");
    await afterTurns(() => p.started("running"));
    p.queue.stopQueued();
    // Were a dropped attempt to run after all, it would not hold the queue: the log below would show it.
    p.release("running");
    p.release("queued_behind");
    p.release("waiting_for_cap");
    await p.queue.drain();
    expect(p.log).toEqual(["running:start", "running:end"]);
    expect(p.queue.isBusy("ses_a")).toBe(false);
    expect(p.queue.isBusy("ses_b")).toBe(false);
    expect(p.errors).toEqual([]);
  });

  it("drain() waits for the running attempts and the queued ones", async () => {
    const p = probe(8);
    p.add("ses_a", "first");
    p.add("ses_a", "second");
    p.add("ses_b", "other");
    await afterTurns(() => p.started("first") && p.started("other"));
    const drained = p.queue.drain().then(() => void p.log.push("drained"));
    await turn();
    p.release("first");
    p.release("other");
    await afterTurns(() => p.started("second"));
    await turn();
    p.release("second");
    await drained;
    expect(p.log.at(-1)).toBe("drained");
    expect(p.log.filter((l) => l.endsWith(":end")).sort()).toEqual(["first:end", "other:end", "second:end"]);
  });
});
