// notice-delivery.ts promises: a newer pending notice of the session stands for an older one (the older waits for it;
// of two made in the same millisecond the greater id is the newer); once `perHour` went out in the last hour a notice
// waits until the oldest that counts leaves the window; else it goes with every older pending one folded in. After an
// attempt: retries 5 s apart, doubling to 2 min; a receiver's Retry-After honoured when longer, up to an hour; a
// refusal that another try cannot help, or a retry that would come more than a day after the notice was made, is the
// end.
import { describe, expect, it } from "vitest";
import {
  afterAttempt,
  noticeTurn,
  NOTICE_GIVE_UP_MS,
  NOTICE_RETRY_BASE_MS,
  NOTICE_RETRY_MAX_MS,
  NOTICE_WINDOW_MS,
  type AttemptResult,
} from "../../src/core/notice-delivery.js";

const NOW = 1_800_000_000_000;
const MIN = 60_000;
const notice = (id: string, createdAt: number, nextAttemptAt = createdAt) => ({ id, createdAt, nextAttemptAt });

describe("a notice's turn", () => {
  const old = notice("n_old", NOW - 10 * MIN);
  const mid = notice("n_mid", NOW - 5 * MIN);

  it("goes alone when nothing else waits and nothing went out", () => {
    expect(noticeTurn(old, [old], [], 4, NOW)).toEqual({ send: true, folded: [] });
    expect(noticeTurn(old, [], [], 4, NOW), "not among the pending it was read with").toEqual({
      send: true,
      folded: [],
    });
  });

  it("waits for a newer one of the session, until that one is due", () => {
    const newer = notice("n_new", NOW - MIN, NOW + 30_000);
    expect(noticeTurn(old, [old, newer], [], 4, NOW)).toEqual({ send: false, until: NOW + 30_000, why: "newer" });
    expect(noticeTurn(mid, [old, mid, newer], [], 4, NOW)).toEqual({ send: false, until: NOW + 30_000, why: "newer" });
    const dueAlready = notice("n_new", NOW - MIN, NOW - 1000);
    expect(noticeTurn(old, [old, dueAlready], [], 4, NOW)).toEqual({ send: false, until: NOW, why: "newer" });
  });

  it("the newest goes with every older pending one folded in, oldest first", () => {
    const newest = notice("n_new", NOW - MIN);
    expect(noticeTurn(newest, [old, mid, newest], [], 4, NOW)).toEqual({ send: true, folded: ["n_old", "n_mid"] });
  });

  it("of two made in the same millisecond, the greater id is the newer: one goes, folding in the other", () => {
    const a = notice("ntc_a:hook", NOW - MIN);
    const b = notice("ntc_b:hook", NOW - MIN);
    expect(noticeTurn(a, [a, b], [], 4, NOW)).toEqual({ send: false, until: NOW, why: "newer" });
    expect(noticeTurn(b, [a, b], [], 4, NOW)).toEqual({ send: true, folded: ["ntc_a:hook"] });
  });

  it("once perHour went out in the last hour, waits until the oldest of them leaves the window", () => {
    const sent = [NOW - 50 * MIN, NOW - 20 * MIN];
    expect(noticeTurn(old, [old], sent, 2, NOW)).toEqual({
      send: false,
      until: NOW - 50 * MIN + NOTICE_WINDOW_MS,
      why: "rate_limit",
    });
    expect(noticeTurn(old, [old], sent, 3, NOW)).toEqual({ send: true, folded: [] });
  });

  it("with more sent than perHour, waits until enough of them left for one more (sent times in any order)", () => {
    const sent = [NOW - 10 * MIN, NOW - 40 * MIN, NOW - 55 * MIN, NOW - 30 * MIN];
    expect(noticeTurn(old, [old], sent, 2, NOW)).toEqual({
      send: false,
      until: NOW - 30 * MIN + NOTICE_WINDOW_MS,
      why: "rate_limit",
    });
  });

  it("counts only what went out within the hour: one sent an hour ago or more is outside", () => {
    const outside = [NOW - NOTICE_WINDOW_MS, NOW - 2 * NOTICE_WINDOW_MS, NOW - 61 * MIN];
    expect(noticeTurn(old, [old], outside, 1, NOW)).toEqual({ send: true, folded: [] });
    expect(noticeTurn(old, [old], [...outside, NOW - NOTICE_WINDOW_MS + 1], 1, NOW)).toEqual({
      send: false,
      until: NOW + 1,
      why: "rate_limit",
    });
  });

  it("the rate limit holds the newest too, and a newer notice is waited for before the rate limit is asked", () => {
    const newest = notice("n_new", NOW - MIN);
    const sent = [NOW - 5 * MIN];
    expect(noticeTurn(newest, [old, newest], sent, 1, NOW)).toEqual({
      send: false,
      until: NOW - 5 * MIN + NOTICE_WINDOW_MS,
      why: "rate_limit",
    });
    expect(noticeTurn(old, [old, newest], sent, 1, NOW)).toEqual({ send: false, until: NOW, why: "newer" });
  });
});

describe("after an attempt", () => {
  const down: AttemptResult = { ok: false, retryable: true, error: "503 from hooks.example.com" };
  const created = NOW - MIN;
  const retryIn = (result: AttemptResult, attempt: number) => {
    const after = afterAttempt(result, attempt, created, NOW);
    return !after.sent && after.retryAt !== undefined ? after.retryAt - NOW : after;
  };

  it("sent is sent", () => {
    expect(afterAttempt({ ok: true }, 3, created, NOW)).toEqual({ sent: true });
  });

  it("backs off 5 s, doubling each attempt, never more than 2 min", () => {
    const waits = [1, 2, 3, 4, 5, 6, 7, 50].map((attempt) => retryIn(down, attempt));
    expect(waits).toEqual([5_000, 10_000, 20_000, 40_000, 80_000, 120_000, 120_000, 120_000]);
    expect([NOTICE_RETRY_BASE_MS, NOTICE_RETRY_MAX_MS]).toEqual([5_000, 120_000]);
    expect(afterAttempt(down, 1, created, NOW)).toEqual({ sent: false, error: down.error, retryAt: NOW + 5_000 });
  });

  it("honours a Retry-After longer than the backoff, up to an hour", () => {
    expect(retryIn({ ...down, retryAfterMs: 30_000 }, 1)).toBe(30_000);
    expect(retryIn({ ...down, retryAfterMs: 3 * 3_600_000 }, 1)).toBe(3_600_000);
  });

  it("keeps the backoff when Retry-After is shorter", () => {
    expect(retryIn({ ...down, retryAfterMs: 1_000 }, 3)).toBe(20_000);
    expect(retryIn({ ...down, retryAfterMs: 0 }, 1)).toBe(5_000);
  });

  it("gives up a refusal another try cannot help, whatever its Retry-After", () => {
    const refused: AttemptResult = {
      ok: false,
      retryable: false,
      error: "404 from hooks.example.com",
      retryAfterMs: 1,
    };
    expect(afterAttempt(refused, 1, created, NOW)).toEqual({ sent: false, error: "404 from hooks.example.com" });
  });

  it("gives up a retry that would come more than a day after the notice was made", () => {
    expect(NOTICE_GIVE_UP_MS).toBe(24 * 3_600_000);
    const lastChance = NOW + 120_000 - NOTICE_GIVE_UP_MS;
    expect(afterAttempt(down, 9, lastChance, NOW)).toEqual({ sent: false, error: down.error, retryAt: NOW + 120_000 });
    expect(afterAttempt(down, 9, lastChance - 1, NOW)).toEqual({ sent: false, error: down.error });
    const longWait = { ...down, retryAfterMs: 3_600_000 };
    expect(afterAttempt(longWait, 1, NOW - 23.5 * 3_600_000, NOW), "a Retry-After past the day").toEqual({
      sent: false,
      error: down.error,
    });
  });
});
