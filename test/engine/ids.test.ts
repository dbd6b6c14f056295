// ids promises: newId gives random ids with a readable prefix (`cd_…` countdowns, `inj_…` injections) that never repeat;
// newMessageId gives a message id in OpenCode's own format — `msg_`, then 12 hex digits of (ms × 4096 + a counter that
// starts at 1 in each millisecond), then 14 base62 characters — so that ids sort in the order they were made, within a
// millisecond and across milliseconds, and the prompt can be sent with an id known in advance.
import { describe, expect, it } from "vitest";
import { newId, newMessageId } from "../../src/engine/ids.js";
import { START } from "../support/fake-time.js";

const MESSAGE_ID = /^msg_([0-9a-f]{12})([0-9A-Za-z]{14})$/;

/** The 12 hex digits of a message id, as the number they encode. */
function stampOf(id: string): bigint {
  const match = MESSAGE_ID.exec(id);
  expect(match, id).not.toBeNull();
  return BigInt(`0x${match![1]}`);
}

/** What OpenCode writes for ms and counter: the low 48 bits of ms × 4096 + counter. */
const expectedStamp = (ms: number, counter: number) => (BigInt(ms) * 4096n + BigInt(counter)) & ((1n << 48n) - 1n);

/** A millisecond no other test uses, so the module's per-millisecond counter starts afresh. */
let nextMs = START.getTime();
const freshMs = () => (nextMs += 1000);

describe("newId", () => {
  it.each(["cd", "inj"] as const)("`%s_` and 12 URL-safe characters", (prefix) => {
    expect(newId(prefix)).toMatch(new RegExp(`^${prefix}_[A-Za-z0-9_-]{12}$`));
  });

  it("never repeats", () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => newId("cd")));
    expect(ids.size).toBe(10_000);
  });
});

describe("newMessageId", () => {
  it("is `msg_`, 12 lowercase hex digits, 14 base62 characters", () => {
    expect(newMessageId(freshMs())).toMatch(MESSAGE_ID);
    expect(newMessageId()).toMatch(MESSAGE_ID);
  });

  it("encodes ms × 4096 + a counter that starts at 1 and counts the ids of that millisecond", () => {
    const ms = freshMs();
    expect([newMessageId(ms), newMessageId(ms), newMessageId(ms)].map(stampOf)).toEqual([
      expectedStamp(ms, 1),
      expectedStamp(ms, 2),
      expectedStamp(ms, 3),
    ]);
  });

  it("starts the counter again in a new millisecond", () => {
    const ms = freshMs();
    newMessageId(ms);
    newMessageId(ms);
    expect(stampOf(newMessageId(ms + 1))).toBe(expectedStamp(ms + 1, 1));
    // Back to an earlier millisecond (the clock stepped back): a new one for the counter, too.
    expect(stampOf(newMessageId(ms))).toBe(expectedStamp(ms, 1));
  });

  it("without an argument, is stamped with the current time", () => {
    const before = Date.now();
    const stamp = stampOf(newMessageId());
    const after = Date.now();
    expect(stamp).toBeGreaterThan(expectedStamp(before, 0));
    expect(stamp).toBeLessThan(expectedStamp(after + 1, 0));
  });

  it("ids made one after another sort in the order they were made, within a millisecond and across them", () => {
    const base = freshMs();
    const made: string[] = [];
    for (let ms = base; ms < base + 50; ms++) for (let i = 0; i < 1 + (ms % 7) * 20; i++) made.push(newMessageId(ms));
    expect([...made].sort()).toEqual(made);
    expect(new Set(made).size).toBe(made.length);
  });

  it("an id of a later millisecond sorts after every id of an earlier one", () => {
    const ms = freshMs();
    const earlier = Array.from({ length: 100 }, () => newMessageId(ms));
    const later = newMessageId(ms + 1);
    for (const id of earlier) expect(id < later).toBe(true);
  });

  it("its tail is random: ids of the same stamp differ", () => {
    const ms = freshMs();
    const tails = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const id = newMessageId(ms);
      newMessageId(ms + 1); // so that the next id of `ms` starts its counter again: the same stamp
      expect(stampOf(id)).toBe(expectedStamp(ms, 1));
      tails.add(MESSAGE_ID.exec(id)![2]!);
    }
    expect(tails.size).toBe(200);
  });
});
