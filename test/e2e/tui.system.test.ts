// OpenCode's own TUI in tmux (160×45: the sidebar shows), with the server plugin and the TUI plugin on one database and
// the scripted model: what a person sees and does. The panel shows the countdown, the only one on screen; Esc cancels
// it (nothing is sent, audit cancelled/user_key); the palette's stop holds across the next idle without a model request
// and the stop toast says why and how back; the palette's resume lets it continue, and the continuation is one line in
// the transcript while the model got the checklist; a parked session's wait shows in the panel and Esc ends it.
// tui-widths.system.test.ts: where no sidebar shows.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { money, tokens } from "../../src/core/words.js";
import { ROOT } from "../crash/processes.js";
import { textOf } from "./support/scripted-model.js";
import { FIRST_TURN_MS, TuiWorld, useTuiWorld } from "./support/tui.js";
import { fixProvider, script } from "./scenarios.js";

describe("the real OpenCode TUI", () => {
  // A countdown long enough that a loaded machine still shows it with seconds to spare before Esc lands.
  const world = new TuiWorld(script, { server: { countdownSeconds: 10, leaseMs: 3000 } });
  let session = "";

  useTuiWorld(world, { startTimeoutMs: 90_000 });

  it(
    "the sidebar panel shows the countdown and its key; Esc cancels it and nothing is sent",
    async () => {
      await world.say("scenario: tui");
      const counting = await world.waitScreen(
        "the countdown in the panel, with 4 s or more left",
        (s) => /continuing in ([4-9]|10)s · esc cancels/.test(s),
        FIRST_TURN_MS,
      );
      session = world.sessionId()!;
      expect(counting).toContain("Todo continuation");
      expect(counting).toMatch(/0 of 20 continuations/);
      // One countdown on screen: the panel's (nothing beside the prompt, and the server's toasts give way to it).
      expect(counting.match(/continuing in/g)).toHaveLength(1);
      expect(counting).not.toContain("Resuming in");
      // The captured screen for docs/tui.md (and the README).
      mkdirSync(join(ROOT, ".tmp"), { recursive: true });
      writeFileSync(join(ROOT, ".tmp", "tui-countdown.txt"), counting);
      world.keys("Escape");
      const cancelled = await world.waitScreen("the panel after Esc", (s) => s.includes("cancelled by you"), 5000);
      expect(cancelled).not.toMatch(/continuing in \ds/);
      expect(world.rows("SELECT state, end_reason FROM countdowns WHERE session_id = ?", session)).toEqual([
        { state: "cancelled", end_reason: "user_key" },
      ]);
      // In TUI mode OpenCode may load the server plugin twice for the project; the second one defers to the first
      // one's countdown (`skipped: in_flight`), as any second process would.
      expect(world.trail(session).filter((t) => t !== "skipped:in_flight")).toEqual(["armed", "cancelled:user_key"]);
      // At rest (nothing armed, pending or owed in the file; the last decision the cancel, or a look that was still
      // reading OpenCode yielding to it): the cancelled countdown cannot fire and nothing else can start. Nothing went
      // out.
      await world.waitForNothingOwed(session, ["cancelled:user_key", "skipped:user_key"]);
      expect(world.continuationRequests()).toEqual([]);
      expect(world.rows("SELECT id FROM injections")).toEqual([]);
    },
    FIRST_TURN_MS + 30_000,
  );

  it("the palette's stop holds across the next idle without a model request, and a toast says why once", async () => {
    const requestsBefore = world.model.agentRequests().length;
    await world.palette("Stop todo continuation");
    await world.waitScreen("the panel showing the stop", (s) => s.includes("stopped from the palette"), 5000);
    expect(world.model.agentRequests().length).toBe(requestsBefore);
    expect(world.trail(session).slice(-1)).toEqual(["stopped:tui"]);
    await world.say("ok, go on");
    // The way back named as the way it was stopped (the palette: no model turn), on a line of its own.
    const toast = await world.waitScreen("the stop toast", (s) => s.includes("Stopped from the palette."), 20_000);
    expect(toast).toContain("Todo continuation");
    expect(toast).toMatch(/Stopped from the palette\.[^\n]*\n[^\n]*Palette: Resume todo continuation\./);
    // The decision is in the file: skipped because stopped, and nothing counts down that could still send.
    await world.waitFor("the skip", () => world.trail(session).includes("skipped:stopped"));
    expect(world.rows("SELECT id FROM countdowns WHERE state = 'armed'")).toEqual([]);
    expect(world.continuationRequests()).toEqual([]);
    expect(
      world
        .trail(session)
        .filter((t) => t !== "skipped:in_flight")
        .slice(-2),
    ).toEqual(["stopped:tui", "skipped:stopped"]);
  });

  it("the palette's resume lets it continue; the continuation is one line on screen while the model got the checklist", async () => {
    await world.palette("Resume todo continuation");
    await world.waitScreen("a new countdown after the resume", (s) => /continuing in \d+s/.test(s), 20_000);
    const shown = await world.waitScreen(
      "the continuation's one line in the transcript",
      (s) => s.includes("↻ todo-continuation: 1/3 done, continuing with"),
      20_000,
    );
    expect(shown).toContain('continuing with "add the tests"');
    expect(shown).not.toContain("[SYSTEM REMINDER - TODO CONTINUATION]");
    expect(shown).not.toContain("[Status: 1/3 completed");
    const request = await world.waitFor("the continuation at the model", () => world.continuationRequests()[0]);
    const received = textOf(request.messages.at(-1)!.content);
    expect(received).toContain("[SYSTEM REMINDER - TODO CONTINUATION]");
    expect(received).toContain('- [>] "add the tests" (in progress)');
    expect(received).toContain("↻ todo-continuation: 1/3 done");
    await world.waitScreen(
      "the panel once every todo is done",
      (s) => s.includes("done: every todo is closed"),
      20_000,
    );
    expect(world.rows("SELECT status FROM injections")).toEqual([{ status: "sent" }]);
  });
});

describe("a provider's refusal in the real OpenCode TUI", () => {
  const world = new TuiWorld(script, { server: { countdownSeconds: 3, leaseMs: 3000 } });

  useTuiWorld(world, { startTimeoutMs: 90_000 });

  it("a 401 stops it with a toast that says to resume; fixed, the palette's resume names the refusal and it continues", async () => {
    await world.say("scenario: tui-refused");
    const stopped = await world.waitScreen(
      "the stop toast",
      (s) => s.includes("Stopped: the provider refused"),
      40_000,
    );
    expect(stopped).toMatch(/Fix it, then \/resume-continuation\./);
    const session = world.sessionId()!;
    expect(world.trail(session)).toContain("skipped:provider_error");
    fixProvider("tui-refused");
    await world.palette("Resume todo continuation");
    await world.waitScreen("the resume's toast", (s) => s.includes("Lifted the provider's refusal."), 10_000);
    await world.waitScreen(
      "the panel once every todo is done",
      (s) => s.includes("done: every todo is closed"),
      40_000,
    );
    expect(world.continuationRequests()).toHaveLength(2);
    expect(world.trail(session)).toContain("unstopped:tui");
  }, 120_000);
});

describe("a parked session in the real OpenCode TUI", () => {
  const world = new TuiWorld(script, { server: { countdownSeconds: 3, leaseMs: 3000 } });

  useTuiWorld(world, { startTimeoutMs: 90_000 });

  it(
    "the panel shows the wait, until when and why; Esc ends it, and nothing will wake the session",
    async () => {
      await world.say("scenario: tui-later");
      const parked = await world.waitScreen(
        "the park in the panel",
        (s) => /parked until (?:[A-Za-z]{3},? )?\d\d:\d\d( [AP]M)?\s[\s\S]*as asked[\s\S]*esc ends the wait/.test(s),
        FIRST_TURN_MS,
      );
      expect(parked).toContain("Todo continuation");
      const session = world.sessionId()!;
      await world.waitFor("the park's skip", () => world.trail(session).includes("skipped:parked"));
      world.keys("Escape");
      await world.waitScreen("the panel after Esc", (s) => !s.includes("parked until"), 5000);
      await world.waitFor("the wait ended by the key", () => world.trail(session).includes("unparked:key"));
      // Ended in the file: a wake (of any process) needs the park to hold, and it no longer does.
      expect(world.rows("SELECT state, end_reason FROM parks WHERE session_id = ?", session)).toEqual([
        { state: "unparked", end_reason: "key" },
      ]);
      expect(world.continuationRequests()).toEqual([]);
    },
    FIRST_TURN_MS + 30_000,
  );
});

describe("what continuing costs, in the real OpenCode TUI", () => {
  const BUDGET = 1;
  const world = new TuiWorld(script, {
    server: { countdownSeconds: 2, leaseMs: 3000, maxContinuationCost: BUDGET },
    modelCost: { input: 3, output: 15 },
  });

  useTuiWorld(world, { startTimeoutMs: 90_000 });

  it("the panel says what the continuations cost against the budget, as their bills in the file say", async () => {
    await world.say("scenario: tui-cost");
    await world.waitScreen(
      "the panel once every todo is done",
      (s) => s.includes("done: every todo is closed"),
      60_000,
    );
    const session = world.sessionId()!;
    const billed = () =>
      world.rows<{ n: number; tokens: number; cost: number }>(
        "SELECT count(*) AS n, sum(tokens) AS tokens, sum(cost) AS cost FROM continuation_bills WHERE session_id = ?",
        session,
      )[0]!;
    await world.waitFor("both continuations billed", () => billed().n === 2 || undefined);
    const { tokens: used, cost } = billed();
    expect(cost).toBeGreaterThan(0.2);
    const line = `${tokens(used)} tokens · ${money(cost)} of ${money(BUDGET)}`;
    const shown = await world.waitScreen(`the spend line "${line}"`, (s) => s.includes(line), 10_000);
    expect(shown).toContain("2 of 20 continuations");
  }, 120_000);
});
