// CountdownToasts is the countdown the user sees. It promises: during the last countdownSeconds before a countdown's
// deadline, a toast every second that says how many seconds are left (rounded up) and how many todos are open; a
// longer wait (a backoff, a provider's retry-after) stays quiet until its last window; each toast lasts past the next
// tick (no blink between two) and the last one ends at the deadline; while a TUI plugin says (its heartbeat row) that it
// draws this folder's countdowns, no toast, and they come back within a second once it is gone or its heartbeat runs
// out; the toasts stop within a second
// once the countdown ends, whether it ended here or in another process (the TUI's key, seen in the database), and
// that ended countdown is let go; with `toast: false` nothing is shown or scheduled; a toast that fails does not stop
// the countdown's next one, and its failure is not left unhandled. Built as enforcer.ts builds and wires it (shown on
// the countdowns' `armed` call), over the engine's real Countdowns on a real SQLite file and the FakeHost, with fake timers;
// "another process" writes through a second connection to the same file.
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/resolve.js";
import { CountdownToasts } from "../../../src/engine/wait/countdown-toasts.js";
import { Countdowns } from "../../../src/engine/wait/countdowns.js";
import type { ToastRequest } from "../../../src/host/port.js";
import { arm } from "../../../src/store/changes/arm.js";
import { cancelByKey } from "../../../src/store/changes/cancel-by-key.js";
import { openStore } from "../../../src/store/open/open.js";
import type { OperatorStore } from "../../../src/store/operator/operator.js";
import {
  deadOwner,
  elsewhere,
  folder,
  liveOwner,
  makeContext,
  rows,
  store,
  type TestContext,
  useTestFiles,
} from "../../support/engine-context.js";
import { DIRECTORY, testConfig } from "../../support/engine-fixture.js";
import { FakeHost } from "../../support/fake-host.js";
import { advance } from "../../support/fake-time.js";
import { unhandledDuring } from "../../support/unhandled.js";

const S = "ses_toasts";
const COUNTDOWN_S = 3;

let ctx: TestContext;
let host: FakeHost;
let countdowns: Countdowns;
let toasts: CountdownToasts;

/** Countdowns and their toasts, wired as the enforcer wires them. */
function build(overrides: Partial<Config> = {}) {
  const config = testConfig(join(folder, "state.db"), { toast: true, countdownSeconds: COUNTDOWN_S, ...overrides });
  host = new FakeHost();
  ctx = makeContext({ store, config, owner: liveOwner(), host });
  countdowns = new Countdowns(ctx);
  toasts = new CountdownToasts(ctx, countdowns);
  countdowns.connect({ armed: (armed) => toasts.show(armed), due: () => undefined });
}

const summary = { open: 2, total: 3, completed: 1 };
const armFor = (delayMs: number, withSummary = true) =>
  countdowns.arm({ sessionId: S, attempt: 0, delayMs, detail: {}, ...(withSummary ? { summary } : {}) });

/** The toasts' messages so far. */
const shown = () => host.toasts.map((t) => t.message);

/** Lets `ms` pass, then waits for the ticks under way (each reads the countdown's row before its toast). */
async function pass(ms: number) {
  await advance(ms);
  await Promise.allSettled([...ctx.tracked]);
}

useTestFiles({ elsewhere: true });
beforeEach(() => {
  build();
});

afterEach(() => {
  ctx.timers.stop();
});

describe("during the last countdownSeconds", () => {
  it("a toast every second with the seconds left and the open todos, and none once it is due", async () => {
    await armFor(COUNTDOWN_S * 1000);
    await pass(0);
    expect(host.toasts).toEqual([
      {
        title: "Todo continuation",
        message: "Resuming in 3s… (2 todos open)",
        variant: "warning",
        // Past the next tick, which replaces it: it never blinks out between two.
        durationMs: 1600,
      } satisfies ToastRequest,
    ]);
    await pass(999);
    expect(shown()).toHaveLength(1);
    await pass(1);
    expect(shown()).toEqual(["Resuming in 3s… (2 todos open)", "Resuming in 2s… (2 todos open)"]);
    await pass(1000);
    expect(shown()).toEqual([
      "Resuming in 3s… (2 todos open)",
      "Resuming in 2s… (2 todos open)",
      "Resuming in 1s… (2 todos open)",
    ]);
    await pass(5000);
    expect(shown()).toHaveLength(3);
    // The last one goes at the deadline.
    expect(host.toasts.map((t) => t.durationMs)).toEqual([1600, 1600, 1000]);
  });

  it("one todo open is one todo", async () => {
    await countdowns.arm({ sessionId: S, attempt: 0, delayMs: 2000, detail: {}, summary: { ...summary, open: 1 } });
    await pass(0);
    expect(shown()).toEqual(["Resuming in 2s… (1 todo open)"]);
  });

  it("without todo counts (a retry of unknown todos), the seconds alone", async () => {
    await armFor(COUNTDOWN_S * 1000, false);
    await pass(0);
    expect(shown()).toEqual(["Resuming in 3s…"]);
  });

  it("a wait shorter than the window starts at once, rounded up, and ticks on the whole seconds left", async () => {
    await armFor(2500);
    await pass(0);
    expect(shown()).toEqual(["Resuming in 3s… (2 todos open)"]);
    await pass(499);
    expect(shown()).toHaveLength(1);
    await pass(1);
    expect(shown().at(-1)).toBe("Resuming in 2s… (2 todos open)");
    await pass(1000);
    expect(shown().at(-1)).toBe("Resuming in 1s… (2 todos open)");
    await pass(1000);
    expect(shown()).toHaveLength(3);
  });

  it("reads the time left from the countdown itself: one adopted from a process that died, 2 s before its deadline", async () => {
    const now = Date.now();
    await store.change(
      arm(
        {
          id: "cd_left_behind",
          sessionId: S,
          directory: DIRECTORY,
          armedAt: now - 8000,
          deadlineAt: now + 2000,
          owner: deadOwner(),
          leaseUntil: now + 15_000,
          attempt: 0,
          todosOpen: 4,
          todosTotal: 5,
        },
        {},
      ),
    );
    await countdowns.recover("restart");
    // Adopting tells no `armed` (the enforcer shows only countdowns armed here): shown by hand.
    toasts.show(countdowns.get(S)!);
    await pass(0);
    expect(shown()).toEqual(["Resuming in 2s… (4 todos open)"]);
  });
});

describe("a long wait", () => {
  it("stays quiet until its last countdownSeconds", async () => {
    const waitMs = 60_000;
    await armFor(waitMs);
    await pass(waitMs - COUNTDOWN_S * 1000 - 1);
    expect(shown()).toEqual([]);
    await pass(1);
    expect(shown()).toEqual(["Resuming in 3s… (2 todos open)"]);
    await pass(COUNTDOWN_S * 1000);
    expect(shown()).toEqual([
      "Resuming in 3s… (2 todos open)",
      "Resuming in 2s… (2 todos open)",
      "Resuming in 1s… (2 todos open)",
    ]);
  });

  it("with countdownSeconds 0, the last second is still shown", async () => {
    build({ countdownSeconds: 0 });
    await armFor(5000);
    await pass(3999);
    expect(shown()).toEqual([]);
    await pass(1);
    expect(shown()).toEqual(["Resuming in 1s… (2 todos open)"]);
    await pass(1000);
    expect(shown()).toHaveLength(1);
  });
});

describe("once the countdown ends", () => {
  it("cancelled here: no toast after it", async () => {
    await armFor(COUNTDOWN_S * 1000);
    await pass(400);
    expect(await countdowns.cancel(S, "user_message", {})).toBe(true);
    await pass(COUNTDOWN_S * 1000);
    expect(shown()).toEqual(["Resuming in 3s… (2 todos open)"]);
  });

  it("cancelled with the TUI's key in another process: no toast after it, and the countdown is let go", async () => {
    const armed = (await armFor(COUNTDOWN_S * 1000))!;
    await pass(400);
    expect(await elsewhere.change(cancelByKey({ sessionId: S, directory: DIRECTORY }, Date.now(), {}))).toMatchObject({
      id: armed.row.id,
    });
    // Within a second: the next tick reads the row and stops.
    await pass(600);
    expect(shown()).toEqual(["Resuming in 3s… (2 todos open)"]);
    expect(countdowns.has(S)).toBe(false);
    expect(ctx.timers.has(`toast:${armed.row.id}`)).toBe(false);
    await pass(COUNTDOWN_S * 1000);
    expect(shown()).toHaveLength(1);
    expect(rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "user_key" }]);
  });

  it("superseded by a newer countdown: only the newer one is shown", async () => {
    await armFor(COUNTDOWN_S * 1000);
    await pass(500);
    await armFor(COUNTDOWN_S * 1000, false);
    await pass(0);
    await pass(COUNTDOWN_S * 1000);
    expect(shown()).toEqual([
      "Resuming in 3s… (2 todos open)",
      "Resuming in 3s…",
      "Resuming in 2s…",
      "Resuming in 1s…",
    ]);
  });
});

describe("while a TUI plugin draws this folder's countdowns", () => {
  /** A TUI of this OpenCode (its pid, another module instance), as the TUI plugin says it is there. */
  const TUI = `${hostname()}/${process.pid}/tui`;
  let tui: OperatorStore;
  beforeEach(async () => {
    tui = await openStore(join(folder, "state.db"), { kind: "tui" });
  });
  afterEach(async () => {
    await tui.close();
  });

  it("the toasts give way to it for the whole countdown", async () => {
    await tui.heartbeat(TUI, 15_000, DIRECTORY);
    await armFor(COUNTDOWN_S * 1000);
    await pass(COUNTDOWN_S * 1000);
    expect(shown()).toEqual([]);
  });

  it("they come back within a second once it says it is gone", async () => {
    await tui.heartbeat(TUI, 15_000, DIRECTORY);
    await armFor(COUNTDOWN_S * 1000);
    await pass(1200);
    expect(shown()).toEqual([]);
    await tui.retire(TUI);
    await pass(800);
    expect(shown()).toEqual(["Resuming in 1s… (2 todos open)"]);
  });

  it("they come back once its heartbeat runs out (a TUI that crashed)", async () => {
    await tui.heartbeat(TUI, 1500, DIRECTORY);
    await armFor(COUNTDOWN_S * 1000);
    await pass(1000);
    expect(shown()).toEqual([]);
    await pass(1000);
    expect(shown()).toEqual(["Resuming in 1s… (2 todos open)"]);
  });

  it("a TUI of another folder does not draw this one's countdowns", async () => {
    await tui.heartbeat(TUI, 15_000, "/another/project");
    await armFor(COUNTDOWN_S * 1000);
    await pass(0);
    expect(shown()).toEqual(["Resuming in 3s… (2 todos open)"]);
  });
});

describe("with toast: false", () => {
  it("nothing is shown and nothing is scheduled", async () => {
    build({ toast: false });
    const armed = (await armFor(COUNTDOWN_S * 1000))!;
    const long = (await countdowns.arm({ sessionId: "ses_long", attempt: 0, delayMs: 60_000, detail: {} }))!;
    expect(ctx.timers.has(`toast:${armed.row.id}`)).toBe(false);
    expect(ctx.timers.has(`toast:${long.row.id}`)).toBe(false);
    expect(ctx.tracked.size).toBe(0);
    await pass(60_000);
    expect(host.toasts).toEqual([]);
  });
});

describe("a toast that fails", () => {
  it("does not stop the next one, and leaves no rejection unhandled", async () => {
    let calls = 0;
    const toast = host.toast.bind(host);
    host.toast = (request) => (++calls === 1 ? Promise.reject(new Error("TUI gone")) : toast(request));
    const unhandled = await unhandledDuring(async () => {
      await armFor(COUNTDOWN_S * 1000);
      await pass(0);
      await pass(1000);
    });
    expect(unhandled).toEqual([]);
    expect(calls).toBe(2);
    expect(shown()).toEqual(["Resuming in 2s… (2 todos open)"]);
    expect(ctx.failures).toEqual([]);
  });
});
