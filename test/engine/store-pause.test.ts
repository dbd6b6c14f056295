// StorePause promises: told the database stopped working, a running engine pauses (nothing decided), drops the
// countdowns it holds from memory (their rows stay its own) and the user messages it held, and reports `store_paused`;
// told it works again, it runs again, adopts its countdowns back, then looks at every idle the pause kept from being
// judged, and reports `store_resumed`. Reports arrive whatever the mode; the mode changes only from the one expected.
import { beforeEach, describe, expect, it } from "vitest";
import type { EngineEvents } from "../../src/engine/engine-events.js";
import type { EngineParts } from "../../src/engine/parts.js";
import { StorePause } from "../../src/engine/store-pause.js";
import { quiet, rows, type TestContext } from "../support/engine-context.js";
import { ev } from "../support/events.js";
import { hostWithOpenTodos } from "../support/fake-host.js";
import { buildPartsRig, useParts } from "../support/parts-rig.js";

useParts();

const S = "ses_pause";
const PAUSED: EngineEvents["store_paused"] = { problem: "locked", message: "paused: locked" };
const RESUMED: EngineEvents["store_resumed"] = { problem: "locked", pausedForMs: 5000, failedWrites: 2 };
let ctx: TestContext;
let parts: EngineParts;
let pause: StorePause;
let reported: string[];

beforeEach(() => {
  ({ ctx, parts } = buildPartsRig({ config: { countdownSeconds: 60 }, host: hostWithOpenTodos(S) }));
  pause = new StorePause(ctx, parts);
  reported = [];
  ctx.events.on("store_paused", ({ message }) => void reported.push(`paused ${message}`));
  ctx.events.on("store_resumed", ({ pausedForMs }) => void reported.push(`resumed after ${pausedForMs}`));
});

const settle = () => quiet(ctx, () => parts.queue.drain());

describe("the database stops working", () => {
  it("pauses a running engine: countdowns dropped from memory, their rows kept; reported once", async () => {
    parts.router.handle(ev.idle(S));
    await settle();
    expect(parts.countdowns.has(S)).toBe(true);
    pause.paused(PAUSED);
    expect(ctx.lifecycle.mode).toBe("paused_store");
    expect(parts.countdowns.has(S)).toBe(false);
    expect(rows.countdowns(S)).toMatchObject([{ state: "armed", owner: ctx.owner }]);
    expect(reported).toEqual(["paused paused: locked"]);
  });

  it("an engine not running keeps its mode, and the report still goes out", () => {
    ctx.lifecycle.enter("disposing");
    pause.paused(PAUSED);
    pause.resumed(RESUMED);
    expect(ctx.lifecycle.mode).toBe("disposing");
    expect(reported).toEqual(["paused paused: locked", "resumed after 5000"]);
  });
});

describe("the database works again", () => {
  it("runs again: its countdowns adopted back first, then the idles the pause kept from being judged", async () => {
    parts.router.handle(ev.idle(S));
    await settle();
    pause.paused(PAUSED);
    parts.router.observe(ev.idle("ses_unjudged"));
    ctx.host.setTodos("ses_unjudged", [["b", "pending"]]);
    ctx.host.addUserMessage("ses_unjudged", "go");
    pause.resumed(RESUMED);
    expect(ctx.lifecycle.mode).toBe("running");
    await settle();
    expect(parts.countdowns.has(S)).toBe(true);
    expect(rows.audit(S).map((r) => r.event)).toEqual(["armed", "resumed"]);
    expect(rows.audit("ses_unjudged")).toMatchObject([{ event: "armed", detail: { trigger: "reevaluate" } }]);
    expect(reported).toEqual(["paused paused: locked", "resumed after 5000"]);
  });
});
