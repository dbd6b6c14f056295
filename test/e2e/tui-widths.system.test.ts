// OpenCode's own TUI where it draws no sidebar — at 100×30 and 120×40 (it draws one above 120 columns) and at 160×45
// with the sidebar hidden from the palette — with the server plugin and the TUI plugin on one database and the
// scripted model. There, as everywhere: the countdown is readable beside the prompt and is the only one on screen (the
// server's toasts give way to it); typing into the prompt during it cancels it (`via: typing`) and nothing goes to
// the model; keys in the palette, its search and the Esc that closes it are the palette's, and the continuation
// arrives. A capture every 30 ms through a whole countdown: the number never disappears before the deadline
// and never disagrees with the deadline by more than the time a frame takes to reach the screen. A park shows there
// too, with the key that ends it.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../crash/processes.js";
import { PALETTE } from "../../src/tui/tui-plugin.js";
import { waitFor } from "../support/wait-for.js";
import { FIRST_TURN_MS, TuiWorld, useTuiWorld } from "./support/tui.js";
import { script } from "./scenarios.js";

const COUNTDOWN = /continuing in (\d+)s · esc cancels/;
/** The server's toast, which must give way to the countdown the TUI draws. */
const SERVER_TOAST = "Resuming in";
/** How late a frame may show a second that has just ended: render, capture and this machine's load. */
const FRAME_LATENESS_MS = 300;

interface Terminal {
  name: string;
  size: { columns: number; rows: number };
  hideSidebar: boolean;
}
const TERMINALS: Terminal[] = [
  { name: "100×30", size: { columns: 100, rows: 30 }, hideSidebar: false },
  { name: "120×40", size: { columns: 120, rows: 40 }, hideSidebar: false },
  { name: "160×45 with the sidebar hidden", size: { columns: 160, rows: 45 }, hideSidebar: true },
];

/** Every frame from now until `done`, captured every 30 ms, with the times just before and after its capture. */
async function frames(world: TuiWorld, done: (screen: string) => boolean, timeoutMs = 30_000) {
  const taken: Array<{ before: number; after: number; screen: string }> = [];
  const take = () => {
    const before = Date.now();
    const screen = world.screen();
    taken.push({ before, after: Date.now(), screen });
    return done(screen);
  };
  const report = () => taken.at(-1)?.screen ?? "";
  await waitFor("the end of the countdown", take, { timeoutMs, interval: 30, report });
  return taken;
}

describe.each(TERMINALS)("the real OpenCode TUI at $name", ({ size, hideSidebar }) => {
  const world = new TuiWorld(script, { server: { countdownSeconds: 8, leaseMs: 3000 }, size });
  let session = "";

  useTuiWorld(world, {
    startTimeoutMs: 120_000,
    setUp: async () => {
      if (!hideSidebar) return;
      // As a person would: the sidebar shows in a session, its palette entry hides it, and `/new` starts afresh.
      await world.say("scenario: tui-widths");
      await world.waitScreen("the panel's countdown", (s) => /continuing in \d+s/.test(s), FIRST_TURN_MS);
      world.keys("Escape");
      await world.waitScreen("the panel after Esc", (s) => s.includes("cancelled by you"), 10_000);
      await world.palette("Hide sidebar");
      await world.waitScreen("no sidebar", (s) => !s.includes("cancelled by you"), 10_000);
      // The cancel's toast (3 s) would otherwise still be over the new session's first screen.
      await world.waitScreen("the cancel's toast gone", (s) => !s.includes("Todo continuation"), 15_000);
      await world.say("/new");
      await world.waitScreen("a new session", (s) => !s.includes("scenario: tui-widths"), 10_000);
    },
  });

  it(
    "the countdown is beside the prompt and alone on screen; typing cancels it and nothing is sent",
    async () => {
      await world.say("scenario: tui-widths");
      const counting = await world.waitScreen(
        "the countdown beside the prompt",
        (s) => COUNTDOWN.test(s),
        FIRST_TURN_MS,
      );
      session = world.sessionId()!;
      // The captured screen for docs/tui.md.
      mkdirSync(join(ROOT, ".tmp"), { recursive: true });
      writeFileSync(join(ROOT, ".tmp", `tui-countdown-${size.columns}x${size.rows}.txt`), counting);
      expect(counting.match(/continuing in/g)).toHaveLength(1);
      expect(counting).not.toContain(SERVER_TOAST);
      expect(counting).not.toContain("Todo continuation"); // no panel: no sidebar is drawn
      world.type("also check the changelog");
      await world.waitFor("the cancel by typing", () =>
        world
          .rows<{ detail: string }>(
            "SELECT detail FROM audit_events WHERE session_id = ? AND event = 'cancelled' AND reason = 'user_key'",
            session,
          )
          .some((r) => JSON.parse(r.detail).via === "typing"),
      );
      await world.waitScreen("the countdown gone", (s) => !COUNTDOWN.test(s), 5000);
      await world.waitForNothingOwed(session, ["cancelled:user_key", "skipped:user_key"]);
      expect(world.continuationRequests()).toEqual([]);
      expect(world.screen()).toContain("also check the changelog"); // still in the prompt, unsent
    },
    FIRST_TURN_MS + 30_000,
  );

  it("the palette's search and the Esc that closes it are the palette's: the countdown goes on and the continuation arrives", async () => {
    world.keys("Enter"); // sends what was typed: the model leaves todos open again
    await world.waitScreen("a new countdown", (s) => COUNTDOWN.test(s), 30_000);
    const armed = world.trail(session).filter((t) => t === "armed").length;
    await world.searchPalette("todo");
    // Each entry whole on its row: title and description, no word cut.
    const palette = world.screen();
    for (const { title, desc } of Object.values(PALETTE)) expect(palette).toContain(`${title} ${desc}`);
    world.keys("Escape");
    await world.waitScreen(
      "the palette closed, the countdown still on",
      (s) => COUNTDOWN.test(s) && !/Commands\s+esc/.test(s),
    );
    const request = await world.waitFor("the continuation at the model", () => world.continuationRequests()[0], 30_000);
    expect(request).toBeDefined();
    const trail = world.trail(session);
    expect(trail.filter((t) => t === "armed")).toHaveLength(armed);
    expect(trail.slice(trail.lastIndexOf("armed"))).not.toContain("cancelled:user_key");
  });

  it("captured every 30 ms through a whole countdown: always shown, never off the deadline", async () => {
    await world.waitForNothingOwed(session, ["skipped:todos_complete"], 30_000);
    await world.say("go on with the docs");
    await world.waitScreen("a new countdown", (s) => COUNTDOWN.test(s), 30_000);
    const [row] = world.rows<{ deadline_at: number }>(
      "SELECT deadline_at FROM countdowns WHERE session_id = ? AND state = 'armed'",
      session,
    );
    const deadline = row!.deadline_at;
    const taken = await frames(world, (s) => !COUNTDOWN.test(s) && !s.includes("continuing now"));
    let worst = 0;
    for (const { before, after, screen } of taken) {
      expect(screen).not.toContain(SERVER_TOAST);
      const shown = COUNTDOWN.exec(screen)?.[1];
      if (after < deadline - FRAME_LATENESS_MS)
        expect(shown, `a frame ${deadline - after} ms before the deadline`).toBeDefined();
      if (!shown) continue;
      // Shows n: the time left was in ((n-1) s, n s] when the frame was drawn, a little before its capture.
      const n = Number(shown);
      const late = Math.max(0, (n - 1) * 1000 - (deadline - before));
      const early = Math.max(0, deadline - after - n * 1000);
      expect(early, `"${n}s" shown ${deadline - after} ms before the deadline`).toBe(0);
      worst = Math.max(worst, late);
      expect(late, `"${n}s" still shown ${deadline - before} ms before the deadline`).toBeLessThanOrEqual(
        FRAME_LATENESS_MS,
      );
    }
    console.log(`${taken.length} frames through the countdown; the latest second was ${worst} ms late`);
  });

  it("a parked session's wait is beside the prompt, until when and the key; Esc ends it and nothing wakes it", async () => {
    await world.waitForNothingOwed(session, ["skipped:todos_complete"], 30_000);
    await world.say("/new");
    await world.waitScreen("a new session", (s) => !s.includes("go on with the docs"), 10_000);
    await world.say("scenario: tui-later");
    const parked = await world.waitScreen(
      "the park beside the prompt",
      (s) => /parked until (?:[A-Za-z]{3},? )?\d\d:\d\d( [AP]M)? · esc cancels/.test(s),
      FIRST_TURN_MS,
    );
    mkdirSync(join(ROOT, ".tmp"), { recursive: true });
    writeFileSync(join(ROOT, ".tmp", `tui-park-${size.columns}x${size.rows}.txt`), parked);
    expect(parked.match(/parked until/g)).toHaveLength(1);
    const later = world.sessionId()!;
    expect(later).not.toBe(session);
    await world.waitFor("the park's skip", () => world.trail(later).includes("skipped:parked"));
    world.keys("Escape");
    await world.waitScreen("the wait gone from beside the prompt", (s) => !s.includes("parked until"), 5000);
    await world.waitFor("the wait ended by the key", () => world.trail(later).includes("unparked:key"));
    expect(world.rows("SELECT state, end_reason FROM parks WHERE session_id = ?", later)).toEqual([
      { state: "unparked", end_reason: "key" },
    ]);
    expect(world.continuationRequests("tui-later")).toEqual([]);
  });
});
