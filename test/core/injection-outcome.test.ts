// The failure plan of a prompt call, as a pure function of how the call failed and what a look in the session found:
// a continuation found is `sent` (never sent again), one that may still arrive is `unknown` (counted, and looked for
// before a retry), one certainly not delivered is `failed`; only a full context gives up at once, and every attempt
// counts towards maxRetries with an exponential, capped backoff.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  mustLookUp,
  retryAfter,
  retryDetail,
  verdictAfterFailure,
  type CallFailure,
  type FailureVerdict,
  type Lookup,
  type RetryPlan,
} from "../../src/core/injection-outcome.js";

const NOW = 1_700_000_000_000;
const LOOKUPS: Lookup[] = ["not_looked", "found", "not_found", "unreadable"];

const failure = (overrides: Partial<CallFailure> = {}): CallFailure => ({
  message: "fetch failed",
  timeout: false,
  mayHaveBeenDelivered: true,
  ...overrides,
});

describe("mustLookUp", () => {
  // Only whether OpenCode may have carried the call out decides; a timeout alone is not a reason (it always comes
  // with mayHaveBeenDelivered in the engine), so the two flags are crossed to prove it.
  it.each([
    { timeout: false, mayHaveBeenDelivered: false, expected: false },
    { timeout: true, mayHaveBeenDelivered: false, expected: false },
    { timeout: false, mayHaveBeenDelivered: true, expected: true },
    { timeout: true, mayHaveBeenDelivered: true, expected: true },
  ])("timeout=$timeout mayHaveBeenDelivered=$mayHaveBeenDelivered → $expected", (row) => {
    expect(mustLookUp(failure(row))).toBe(row.expected);
  });
});

describe("verdictAfterFailure", () => {
  const TRANSIENT = "prompt: HTTP 502 bad gateway";
  const FULL = "prompt: HTTP 400 prompt is too long: 210000 tokens > 200000 maximum";

  // Every (timeout, lookup) cell, written out rather than derived, so that a changed rule shows up as a changed row.
  const cells: Array<{
    timeout: boolean;
    lookup: Lookup;
    verdict: (message: string, final: boolean) => FailureVerdict;
  }> = [
    { timeout: false, lookup: "found", verdict: (message) => ({ status: "sent", detail: { afterError: message } }) },
    { timeout: true, lookup: "found", verdict: () => ({ status: "sent", detail: { afterTimeout: true } }) },
    {
      timeout: false,
      lookup: "unreadable",
      verdict: (_, final) => ({ status: "unknown", reason: "retrying", final }),
    },
    { timeout: true, lookup: "unreadable", verdict: (_, final) => ({ status: "unknown", reason: "timeout", final }) },
    // Not found after a timeout: OpenCode may still be writing it, so it stays possibly delivered.
    { timeout: true, lookup: "not_found", verdict: (_, final) => ({ status: "unknown", reason: "timeout", final }) },
    // Not found after an answer that came back: the call is over, nothing arrived.
    { timeout: false, lookup: "not_found", verdict: (_, final) => ({ status: "failed", final }) },
    { timeout: false, lookup: "not_looked", verdict: (_, final) => ({ status: "failed", final }) },
    { timeout: true, lookup: "not_looked", verdict: (_, final) => ({ status: "failed", final }) },
  ];

  it("the table covers every combination", () => {
    const covered = new Set(cells.map((c) => `${c.timeout}:${c.lookup}`));
    expect(covered.size).toBe(2 * LOOKUPS.length);
  });

  describe.each([
    { kind: "a transient failure", message: TRANSIENT, final: false },
    { kind: "a full context", message: FULL, final: true },
  ])("$kind", ({ message, final }) => {
    it.each(cells)("timeout=$timeout, lookup=$lookup", ({ timeout, lookup, verdict }) => {
      for (const mayHaveBeenDelivered of [true, false]) {
        expect(verdictAfterFailure(failure({ message, timeout, mayHaveBeenDelivered }), lookup)).toStrictEqual(
          verdict(message, final),
        );
      }
    });
  });

  // Retrying cannot fix a full context, whatever words the provider uses; every other kind of error can be retried.
  it.each([
    ["prompt is too long: 210000 tokens > 200000 maximum", true],
    ["This model's maximum context length is 128000 tokens", true],
    ["context_length_exceeded", true],
    ["ContextOverflowError: input exceeds the context window", true],
    ["fetch failed", false],
    ["prompt: HTTP 429 rate limit exceeded", false],
    ["prompt: HTTP 401 invalid api key", false],
    ["prompt did not answer within 30000 ms", false],
    ["", false],
  ])("%j is final: %s", (message, final) => {
    const verdict = verdictAfterFailure(failure({ message }), "not_found");
    expect(verdict).toStrictEqual({ status: "failed", final });
  });
});

describe("retryAfter", () => {
  const policy = { maxRetries: 3, retryBaseMs: 1000, retryMaxMs: 3000 };

  it.each<{ before: number; final?: boolean; next: RetryPlan; backoffUntil: number | null }>([
    { before: 0, next: { retry: true, attempt: 1, delayMs: 1000 }, backoffUntil: NOW + 1000 },
    { before: 1, next: { retry: true, attempt: 2, delayMs: 2000 }, backoffUntil: NOW + 2000 },
    // 4000 capped at retryMaxMs.
    { before: 2, next: { retry: true, attempt: 3, delayMs: 3000 }, backoffUntil: NOW + 3000 },
    { before: 3, next: { retry: false, attempt: 4 }, backoffUntil: null },
    { before: 10, next: { retry: false, attempt: 11 }, backoffUntil: null },
    { before: 0, final: true, next: { retry: false, attempt: 1 }, backoffUntil: null },
    { before: 2, final: true, next: { retry: false, attempt: 3 }, backoffUntil: null },
  ])("after $before failure(s), final=$final → $next", ({ before, final, next, backoffUntil }) => {
    expect(retryAfter(before, NOW, policy, final)).toStrictEqual({
      next,
      patch: { consecutiveFailures: next.attempt, backoffUntil },
    });
  });

  it("maxRetries 0 gives up at the first failure", () => {
    expect(retryAfter(0, NOW, { ...policy, maxRetries: 0 }).next).toStrictEqual({ retry: false, attempt: 1 });
  });

  it("a zero base retries at once, still counting the attempt", () => {
    expect(retryAfter(1, NOW, { ...policy, retryBaseMs: 0 })).toStrictEqual({
      next: { retry: true, attempt: 2, delayMs: 0 },
      patch: { consecutiveFailures: 2, backoffUntil: NOW },
    });
  });

  it("holds for any policy: attempts count up by one, waits stay within the cap, backoffUntil matches the wait", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 200 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 3_600_000 }),
        fc.integer({ min: 0, max: 24 * 3_600_000 }),
        fc.boolean(),
        (before, maxRetries, retryBaseMs, retryMaxMs, final) => {
          const { next, patch } = retryAfter(before, NOW, { maxRetries, retryBaseMs, retryMaxMs }, final);
          expect(next.attempt).toBe(before + 1);
          expect(patch.consecutiveFailures).toBe(before + 1);
          expect(next.retry).toBe(!final && before + 1 <= maxRetries);
          if (next.retry) {
            // Never above the cap, never below the base (unless the cap is lower), at most doubled per failure.
            expect(next.delayMs).toBeLessThanOrEqual(retryMaxMs);
            expect(next.delayMs).toBeGreaterThanOrEqual(Math.min(retryBaseMs, retryMaxMs));
            expect(next.delayMs).toBeLessThanOrEqual(retryBaseMs * 2 ** before);
            expect(patch.backoffUntil).toBe(NOW + next.delayMs);
          } else {
            expect(patch.backoffUntil).toBeNull();
          }
        },
      ),
    );
  });
});

describe("retryDetail", () => {
  it.each<[RetryPlan, Record<string, unknown>]>([
    [
      { retry: true, attempt: 2, delayMs: 4000 },
      { attempt: 2, retryInMs: 4000 },
    ],
    [
      { retry: true, attempt: 1, delayMs: 0 },
      { attempt: 1, retryInMs: 0 },
    ],
    [
      { retry: false, attempt: 4 },
      { attempt: 4, final: true },
    ],
  ])("%j reads as %j", (plan, detail) => {
    expect(retryDetail(plan)).toStrictEqual(detail);
  });
});
