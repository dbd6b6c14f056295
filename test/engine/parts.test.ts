// The engine's parts built in order and wired by typed calls: a countdown armed shows its toast, a countdown due
// becomes an attempt that sends, an idle that came while a continuation was in flight is looked at once it settled;
// and session memory never forgets a session whose countdown, attempt or start watch is still live.
import { describe, expect, it } from "vitest";
import type { EngineParts } from "../../src/engine/parts.js";
import { quiet, rows, type TestContext } from "../support/engine-context.js";
import { ev } from "../support/events.js";
import { FakeHost } from "../support/fake-host.js";
import { advance } from "../support/fake-time.js";
import { buildPartsRig, useParts } from "../support/parts-rig.js";

const S = "ses_parts";
let ctx: TestContext;
let parts: EngineParts;

function build(memoryCap?: number): FakeHost {
  const host = new FakeHost();
  host.addUserMessage(S, "go");
  host.setTodos(S, [["a", "pending"]]);
  ({ ctx, parts } = buildPartsRig({ config: { countdownSeconds: 2, toast: true }, host, memoryCap }));
  return host;
}

async function settle(): Promise<void> {
  await quiet(ctx, () => parts.queue.drain());
}

useParts();

describe("the parts, wired", () => {
  it("an idle goes all the way: armed (its toast shown), due, sent", async () => {
    const host = build();
    parts.router.handle(ev.idle(S));
    await settle();
    expect(rows.trail(S)).toEqual(["armed"]);
    expect(host.toasts.map((t) => t.message)).toEqual(["Resuming in 2s… (1 todo open)"]);
    await advance(2000);
    await settle();
    expect(rows.trail(S)).toEqual(["armed", "fired", "injected"]);
    expect(host.prompts).toHaveLength(1);
  });

  it("an idle that came while its continuation was in flight is looked at again once the attempt settled", async () => {
    const host = build();
    host.onAccepted = () => parts.router.handle(ev.idle(S));
    parts.router.handle(ev.idle(S));
    await settle();
    await advance(2000);
    await settle();
    // The look again is a timer at 0 ms, set while time runs: fake timers make that 1 ms.
    await advance(1);
    await settle();
    expect(host.prompts).toHaveLength(1);
    const looks = rows.audit(S).filter((row) => row.detail.trigger !== undefined);
    expect(looks.map((row) => [row.event, row.reason, row.detail.trigger])).toEqual([
      ["armed", null, "idle"],
      ["skipped", "in_flight", "idle"],
      expect.arrayContaining([expect.any(String), "reevaluate"]),
    ]);
  });
});

describe("session memory", () => {
  it("forgets the oldest sessions beyond its cap, never one with a countdown armed", async () => {
    build(10);
    parts.router.handle(ev.idle(S));
    await settle();
    expect(parts.countdowns.has(S)).toBe(true);
    for (let i = 0; i < 30; i++) parts.memories.get(`ses_other_${i}`);
    expect(parts.memories.peek(S)).toBeDefined();
    expect(parts.memories.peek("ses_other_0")).toBeUndefined();
  });
});
