// Lifecycle promises: the enforcer starts running; it moves between running and paused_store while the store fails
// and recovers, goes to disposing from either, and from there only to disposed, which is final. Any other change
// throws a ModeError (modes.ts) and leaves the mode as it was. The flags the enforcer branches on follow from the mode.
import { describe, expect, it } from "vitest";
import { Lifecycle, type Mode } from "../../src/engine/lifecycle.js";
import { ModeError } from "../../src/engine/modes.js";

const MODES: Mode[] = ["running", "paused_store", "disposing", "disposed"];

/** The diagram in lifecycle.ts, written out independently of the module's own table. */
const DIAGRAM = new Set([
  "running>paused_store",
  "paused_store>running",
  "running>disposing",
  "paused_store>disposing",
  "disposing>disposed",
]);

/** A lifecycle brought to `mode` through allowed changes only. */
function at(mode: Mode): Lifecycle {
  const lifecycle = new Lifecycle();
  const path: Record<Mode, Mode[]> = {
    running: [],
    paused_store: ["paused_store"],
    disposing: ["disposing"],
    disposed: ["disposing", "disposed"],
  };
  for (const step of path[mode]) lifecycle.enter(step);
  expect(lifecycle.mode).toBe(mode);
  return lifecycle;
}

describe("transitions", () => {
  it("a new lifecycle is running", () => {
    expect(new Lifecycle().mode).toBe("running");
  });

  const pairs = MODES.flatMap((from) => MODES.map((to) => [from, to] as const));

  it.each(pairs.filter(([from, to]) => DIAGRAM.has(`${from}>${to}`)))("%s → %s is allowed", (from, to) => {
    const lifecycle = at(from);
    lifecycle.enter(to);
    expect(lifecycle.mode).toBe(to);
  });

  it.each(pairs.filter(([from, to]) => !DIAGRAM.has(`${from}>${to}`)))(
    "%s → %s throws and leaves the mode unchanged",
    (from, to) => {
      const lifecycle = at(from);
      let thrown: unknown;
      try {
        lifecycle.enter(to);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ModeError);
      expect((thrown as Error).name).toBe("ModeError");
      expect((thrown as Error).message).toContain(`from ${from} to ${to}`);
      expect(lifecycle.mode).toBe(from);
    },
  );

  it("the store can fail and recover many times before a dispose", () => {
    const lifecycle = new Lifecycle();
    for (let i = 0; i < 5; i++) {
      lifecycle.enter("paused_store");
      lifecycle.enter("running");
    }
    lifecycle.enter("paused_store");
    lifecycle.enter("disposing");
    lifecycle.enter("disposed");
    expect(lifecycle.mode).toBe("disposed");
  });
});

describe("derived flags", () => {
  // deciding: decisions are made and written; listening: events are looked at; stopAsked: dispose has begun.
  const expected: Record<Mode, { deciding: boolean; listening: boolean; stopAsked: boolean }> = {
    running: { deciding: true, listening: true, stopAsked: false },
    paused_store: { deciding: false, listening: true, stopAsked: false },
    disposing: { deciding: false, listening: false, stopAsked: true },
    disposed: { deciding: false, listening: false, stopAsked: true },
  };

  it.each(MODES)("%s", (mode) => {
    const lifecycle = at(mode);
    expect({ deciding: lifecycle.deciding, listening: lifecycle.listening, stopAsked: lifecycle.stopAsked }).toEqual(
      expected[mode],
    );
  });

  it("follow the mode back after the store recovers", () => {
    const lifecycle = at("paused_store");
    lifecycle.enter("running");
    expect([lifecycle.deciding, lifecycle.listening, lifecycle.stopAsked]).toEqual([true, true, false]);
  });
});

describe("describe()", () => {
  it("gives each mode its own words, and the paused one names the database", () => {
    const words = MODES.map((mode) => at(mode).describe());
    expect(new Set(words).size).toBe(MODES.length);
    expect(words[1]).toMatch(/database/);
  });
});
