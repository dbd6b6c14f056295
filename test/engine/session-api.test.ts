// SessionApi promises: a session id nobody could have is refused (a warning, nothing applied; stop, resume and allow
// throw), never applied to some session; stop writes the durable stop and ends the countdown, once; resume lifts it and
// looks at the session at once, except for a command (whose own turn brings the idle); allow adds to the budget and,
// when it lifted a budget stop, looks at once; recovery marks end the countdown and are lifted; continue_later parks
// until a time, and takes a check only when OpenCode's rules let the agent run it without asking; and once the engine
// is ending, a stop, resume or allow rejects instead of writing.
import { beforeEach, describe, expect, it } from "vitest";
import type { EngineParts } from "../../src/engine/parts.js";
import { SessionApi } from "../../src/engine/session-api.js";
import { quiet, rows, type TestContext } from "../support/engine-context.js";
import { ev } from "../support/events.js";
import { hostWithOpenTodos, type FakeHost } from "../support/fake-host.js";
import { buildPartsRig, useParts } from "../support/parts-rig.js";

useParts();

const S = "ses_api";
let ctx: TestContext;
let parts: EngineParts;
let api: SessionApi;

beforeEach(() => {
  ({ ctx, parts } = buildPartsRig({ config: { countdownSeconds: 60 }, host: hostWithOpenTodos(S) }));
  api = new SessionApi(ctx, parts);
});

const settle = () => quiet(ctx, () => parts.queue.drain());

async function armed(): Promise<void> {
  parts.router.handle(ev.idle(S));
  await settle();
  expect(parts.countdowns.has(S)).toBe(true);
}

describe("a session id nobody could have", () => {
  it.each([[""], ["   "], [undefined], [42]])("%j is refused: a warning, nothing written", async (id) => {
    api.markRecovering(id as string);
    api.markRecoveryComplete(id as string);
    await api.reevaluate(id as string);
    await expect(api.stop(id as string)).rejects.toThrow(TypeError);
    await expect(api.resume(id as string)).rejects.toThrow(TypeError);
    await expect(api.allow(id as string)).rejects.toThrow(TypeError);
    await settle();
    expect(rows.audit()).toEqual([]);
    expect(ctx.host.logs.filter((l) => l.level === "warn").map((l) => l.message)).toEqual([
      "markRecovering ignored: no session id (or one no OpenCode session can have)",
      "markRecoveryComplete ignored: no session id (or one no OpenCode session can have)",
      "reevaluate ignored: no session id (or one no OpenCode session can have)",
      "stop ignored: no session id (or one no OpenCode session can have)",
      "resume ignored: no session id (or one no OpenCode session can have)",
      "allow ignored: no session id (or one no OpenCode session can have)",
    ]);
  });
});

describe("stop and resume", () => {
  it("stop ends the countdown and is durable, once; resume lifts it and looks at once", async () => {
    await armed();
    expect(await api.stop(S)).toBe(true);
    expect(await api.stop(S)).toBe(false);
    expect(parts.countdowns.has(S)).toBe(false);
    expect(rows.session(S)).toMatchObject({ stop_source: "api" });
    expect(await api.resume(S)).toBe(true);
    await settle();
    expect(rows.session(S)).toMatchObject({ stopped_at: null });
    expect(rows.audit(S).at(-1)).toMatchObject({ event: "armed", detail: { trigger: "resume" } });
  });

  it("a command's resume leaves the look to the idle its own turn brings", async () => {
    await api.stop(S, "command");
    expect(await api.resume(S, "command")).toBe(true);
    await settle();
    expect(rows.audit(S).filter((r) => r.event === "armed")).toEqual([]);
  });

  it("once the engine is ending, stop and resume reject and write nothing", async () => {
    ctx.lifecycle.enter("disposing");
    await expect(api.stop(S)).rejects.toThrow("todo-continuation cannot stop: it is stopped");
    await expect(api.resume(S)).rejects.toThrow("todo-continuation cannot resume: it is stopped");
    await expect(api.allow(S)).rejects.toThrow("todo-continuation cannot allow: it is stopped");
    expect(rows.session(S)).toBeUndefined();
  });
});

describe("allow", () => {
  const spentBudget = { continuations: 20, notifiedStop: "budget_exhausted" };

  it("lifts the budget stop with more continuations and looks at once: the next continuation is armed", async () => {
    await ctx.changeSession(S, spentBudget);
    parts.router.handle(ev.idle(S));
    await settle();
    expect(rows.audit(S).at(-1)).toMatchObject({ event: "skipped", reason: "budget_exhausted" });
    expect(await api.allow(S, { continuations: 5 })).toEqual({
      changed: true,
      granted: { continuations: 5, cost: 0, tokens: 0 },
      lifted: ["budget_exhausted"],
    });
    await settle();
    expect(rows.session(S)).toMatchObject({ allowed_continuations: 5, continuations: 20, notified_stop: null });
    expect(rows.audit(S).at(-1)).toMatchObject({ event: "armed", detail: { trigger: "resume" } });
    expect(parts.countdowns.has(S)).toBe(true);
  });

  it("with no stop to lift, the allowance is kept for later and nothing is looked at", async () => {
    await ctx.changeSession(S, { continuations: 3 });
    expect(await api.allow(S)).toMatchObject({ changed: true, granted: { continuations: 3 }, lifted: [] });
    await settle();
    expect(rows.audit(S).map((r) => r.event)).toEqual(["unstopped"]);
  });

  it("a command's allowance leaves the look to the idle its own turn brings", async () => {
    await ctx.changeSession(S, spentBudget);
    expect((await api.allow(S, { continuations: 1 }, "command")).lifted).toEqual(["budget_exhausted"]);
    await settle();
    expect(rows.audit(S).filter((r) => r.event === "armed")).toEqual([]);
  });
});

describe("recovery marks", () => {
  it("markRecovering ends the countdown (recovering) and marks the session; markRecoveryComplete lifts the mark", async () => {
    await armed();
    api.markRecovering(S);
    await settle();
    expect(rows.countdowns(S)).toMatchObject([{ state: "cancelled", end_reason: "recovering" }]);
    expect(rows.session(S)?.recovering_since).toEqual(expect.any(Number));
    api.markRecoveryComplete(S);
    await settle();
    expect(rows.session(S)).toMatchObject({ recovering_since: null });
  });
});

describe("continue_later", () => {
  const host = () => ctx.host as FakeHost;
  const inMinutes = (minutes: number, extra: Record<string, unknown> = {}) => ({
    reason: "CI is running",
    minutes,
    ...extra,
  });

  it("parks until the time asked for, and refuses what cannot be honoured, parking nothing", async () => {
    const answer = await api.continueLater(S, inMinutes(30), "build");
    expect(answer).toMatchObject({ parked: true, until: expect.any(Number) });
    expect(rows.parks(S)).toMatchObject([{ reason: "agent", check_command: null, detail: { asked: "CI is running" } }]);
    expect(await api.continueLater("ses_other", { reason: "x", minutes: 0.1 }, "build")).toMatchObject({
      parked: false,
      error: expect.stringContaining("0.25"),
    });
    expect(rows.parks("ses_other")).toEqual([]);
  });

  it("takes a check the agent may run without asking, asking OpenCode's rules for that agent, command and project", async () => {
    const answer = await api.continueLater(
      S,
      inMinutes(30, { check: "test -f done", checkEveryMinutes: 0.5 }),
      "build",
    );
    expect(answer).toMatchObject({ parked: true });
    expect(host().commandRequests).toEqual([
      { sessionId: S, agent: "build", command: "test -f done", project: ctx.followed.directory },
    ]);
    expect(rows.parks(S)).toMatchObject([{ check_command: "test -f done", check_every_ms: 30_000 }]);
  });

  it("refuses a check the agent would be asked about (or may not run), saying why, and runs and parks nothing", async () => {
    host().commandVerdict = { allowed: false, why: 'the agent "build" would be asked before running "git push"' };
    const answer = await api.continueLater(S, inMinutes(30, { check: "git push" }), "build");
    expect(answer).toEqual({
      parked: false,
      error: 'the check will not be run: the agent "build" would be asked before running "git push"',
    });
    expect(await api.continueLater(S, inMinutes(30, { check: "true" }))).toMatchObject({
      parked: false,
      error: expect.stringContaining("agent that asked is not known"),
    });
    host().mayRunCommand = () => Promise.reject(new Error("connection refused"));
    expect(await api.continueLater(S, inMinutes(30, { check: "true" }), "build")).toMatchObject({
      parked: false,
      error: expect.stringContaining("OpenCode did not say what the agent may run"),
    });
    expect(rows.parks(S)).toEqual([]);
  });
});
