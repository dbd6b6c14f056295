// What holds a session as its row tells, and the way on: every stop the core tells is a hold, in its own words, with a
// command that lifts it; a question or all done told is none.
import { describe, expect, it } from "vitest";
import { heldOf, holdsOf, wayOnFrom, type HeldRow } from "../../src/core/holds.js";
import { SKIP_REASONS } from "../../src/core/reasons.js";
import { ALLOW_LIFTS, RESUME_LIFTS, SKIP_FACTS, STOP_NOTICES } from "../../src/core/skip-reasons.js";

const FREE = { stoppedAt: null, pausedAt: null, lastErrorKind: null, notifiedStop: null };
const row = (over: Partial<HeldRow>): HeldRow => ({
  ...FREE,
  sessionId: "ses_X",
  stopSource: null,
  lastErrorAt: null,
  told: null,
  ...over,
});

describe("holdsOf", () => {
  it("is the stop, the pause, a refusal, then the stop told", () => {
    expect(holdsOf(FREE)).toEqual([]);
    expect(
      holdsOf({ stoppedAt: 1, pausedAt: 2, lastErrorKind: "permanent", notifiedStop: "budget_exhausted" }),
    ).toEqual(["stopped", "user_took_over", "provider_error", "budget_exhausted"]);
    expect(holdsOf({ ...FREE, lastErrorKind: "transient" })).toEqual([]);
  });

  it("holds for every told stop of the core's facts and for no other told reason", () => {
    for (const reason of SKIP_REASONS)
      expect(holdsOf({ ...FREE, notifiedStop: reason }), reason).toEqual(STOP_NOTICES.has(reason) ? [reason] : []);
    expect(holdsOf({ ...FREE, notifiedStop: "waiting_for_user" })).toEqual([]);
    expect(holdsOf({ ...FREE, notifiedStop: "todos_complete" })).toEqual([]);
  });
});

describe("wayOnFrom", () => {
  it("allows a spent budget, resumes the rest, and opens the session for a full context", () => {
    expect(wayOnFrom(["budget_exhausted"], "s")).toBe("todo-continuation allow s");
    expect(wayOnFrom(["cost_budget"], "s")).toBe("todo-continuation allow s");
    expect(wayOnFrom(["stopped", "budget_exhausted"], "s")).toBe("todo-continuation resume s");
    expect(wayOnFrom(["gave_up"], "s")).toBe("todo-continuation resume s");
    expect(wayOnFrom(["token_limit"], "s")).toBe("opencode --session s (compact or write)");
    expect(wayOnFrom(["stopped", "token_limit"], "s")).toBe(
      "todo-continuation resume s, then opencode --session s (compact or write)",
    );
  });

  it("names a command for every stop, one that lifts it", () => {
    for (const reason of STOP_NOTICES) {
      const way = wayOnFrom([reason], "s");
      if (ALLOW_LIFTS.has(reason)) expect(way, reason).toBe("todo-continuation allow s");
      else if (RESUME_LIFTS.has(reason)) expect(way, reason).toBe("todo-continuation resume s");
      else expect(SKIP_FACTS[reason as keyof typeof SKIP_FACTS].stop?.lifted, reason).toBeNull();
    }
  });
});

describe("heldOf", () => {
  it("says the first hold in the words of the decision that told it, since then", () => {
    const told = { at: 500, event: "skipped", detail: { continuations: 1 } };
    expect(heldOf(row({ notifiedStop: "budget_exhausted", told }))).toEqual({
      reasons: ["budget_exhausted"],
      since: 500,
      why: { standing: "stopped", text: "stopped: the budget of 1 is spent", hint: "palette: Allow more to go on" },
      goOn: "todo-continuation allow ses_X",
    });
  });

  it("a failed send given up on, told by its injection_failed row", () => {
    const told = { at: 7, event: "injection_failed", detail: { attempt: 3, final: true } };
    expect(heldOf(row({ notifiedStop: "gave_up", told }))?.why.text).toBe("stopped: sending failed 3 times");
  });

  it("a durable stop by who set it, a pause since it began, a refusal not told since the error", () => {
    expect(heldOf(row({ stoppedAt: 9, stopSource: "tui" }))).toMatchObject({
      since: 9,
      why: { text: "stopped from the palette" },
    });
    expect(heldOf(row({ pausedAt: 4 }))).toMatchObject({ since: 4, why: { standing: "paused" } });
    expect(heldOf(row({ lastErrorKind: "permanent", lastErrorAt: 3 }))).toMatchObject({
      since: 3,
      why: { text: "stopped: the provider refused" },
      goOn: "todo-continuation resume ses_X",
    });
  });

  it("nothing when nothing holds, and words without the told row (pruned)", () => {
    expect(heldOf(row({}))).toBeUndefined();
    expect(heldOf(row({ notifiedStop: "stagnation" }))).toMatchObject({
      since: null,
      why: { text: "stopped: times without progress" },
    });
  });
});
