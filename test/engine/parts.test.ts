// The engine's parts built in order and the engine events routed to the parts built later: a countdown armed shows its
// toast, a countdown due becomes an attempt that sends, a session handed back is looked at again; and session memory
// never forgets a session whose countdown, attempt or start watch is still live.
import { afterEach, describe, expect, it } from "vitest";
import { buildParts, routeEngineEvents, type EngineParts } from "../../src/engine/parts.js";
import {
  folder,
  liveOwner,
  makeContext,
  quiet,
  rows,
  store,
  type TestContext,
  useTestFiles,
} from "../support/engine-context.js";
import { testConfig } from "../support/engine-fixture.js";
import { ev } from "../support/events.js";
import { FakeHost } from "../support/fake-host.js";
import { advance } from "../support/fake-time.js";

const S = "ses_parts";
let ctx: TestContext;
let parts: EngineParts;

function build(memoryCap?: number, route = true): FakeHost {
  const host = new FakeHost();
  host.addUserMessage(S, "go");
  host.setTodos(S, [["a", "pending"]]);
  ctx = makeContext({
    store,
    config: testConfig(folder, { countdownSeconds: 2, toast: true }),
    owner: liveOwner(),
    host,
  });
  parts = buildParts(ctx, memoryCap);
  if (route) routeEngineEvents(ctx, parts);
  return host;
}

async function settle(): Promise<void> {
  await quiet(ctx, () => parts.queue.drain());
}

useTestFiles();

afterEach(() => {
  parts?.queue.stopQueued();
  parts?.starts.clear();
  ctx?.timers.stop();
});

describe("the engine events, routed", () => {
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

  it("a session handed back (look_again) is looked at as if it had gone idle", async () => {
    build();
    ctx.events.emit("look_again", { sessionId: S });
    await settle();
    expect(rows.audit(S)).toMatchObject([{ event: "armed", detail: { trigger: "reevaluate" } }]);
  });

  it("without the routes, a countdown comes due and nothing attempts it (the routes are what reach later parts)", async () => {
    const host = build(undefined, false);
    parts.router.handle(ev.idle(S));
    await settle();
    const due: string[] = [];
    ctx.events.on("countdown_due", ({ armed }) => void due.push(armed.row.id));
    await advance(2000);
    await settle();
    expect(due).toEqual([rows.countdowns(S)[0]!.id]);
    expect(rows.trail(S)).toEqual(["armed"]);
    expect(host.prompts).toEqual([]);
    expect(host.toasts).toEqual([]);
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
