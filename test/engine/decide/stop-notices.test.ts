// StopNotices tells the user why continuation ended. It promises: each reason is told once, and durably — the reason
// told is written to the session's row (`notified_stop`), so neither a second skip nor a restart tells it again,
// while a different reason is news; the toast says the explanation and what to do, each as a sentence, under the
// title "Todo continuation" as a warning that stays up eight seconds; with `toast: false` there is no toast but the
// log line stays; a decision with no words (no explanation) tells nothing; and a toast that fails, throws or hangs
// never makes `tell` fail or wait, and its failure is not left unhandled. Built as enforcer.ts builds it, over the
// engine's context on a real SQLite file and the FakeHost; a restart is a new context and StopNotices over a new
// connection to the same file.
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Config } from "../../../src/config/resolve.js";
import { StopNotices } from "../../../src/engine/decide/stop-notices.js";
import type { SqliteConnection } from "../../../src/store/sqlite/open.js";
import { files, folder, makeContext, type TestContext, useTestFiles } from "../../support/engine-context.js";
import { testConfig, type Rows } from "../../support/engine-fixture.js";
import { FakeHost } from "../../support/fake-host.js";
import { advance } from "../../support/fake-time.js";
import { unhandledDuring } from "../../support/unhandled.js";

const S = "ses_notices";
const TIMEOUT_MS = 1000;
const STAGNATION = { unproductiveContinuations: 3 };

const connections: SqliteConnection[] = [];
const contexts: TestContext[] = [];
let rows: Rows;

/** A process: its own connection to the file, its context, and its StopNotices. */
async function boot(overrides: Partial<Config> = {}, host = new FakeHost()) {
  const config = testConfig(join(folder, "state.db"), { toast: true, hostTimeoutMs: TIMEOUT_MS, ...overrides });
  const opened = await files.open(config);
  connections.push(opened.connection);
  rows = opened.rows;
  const ctx = makeContext({ store: opened.store, config, host });
  contexts.push(ctx);
  return { ctx, host, notices: new StopNotices(ctx) };
}

const endedLines = (host: FakeHost) => host.logs.filter((l) => l.message.startsWith("continuation ended"));

useTestFiles({ open: false });

afterEach(() => {
  for (const ctx of contexts.splice(0)) ctx.timers.stop();
  connections.length = 0;
});

describe("told once per reason", () => {
  it("the first time: the toast, the log line, and the reason written to the session's row", async () => {
    const { notices, host, ctx } = await boot();
    await notices.tell(S, "stagnation", STAGNATION);
    expect(host.toasts).toEqual([
      {
        title: "Todo continuation",
        message: "Stopped: 3 times without progress.\n/resume-continuation to go on.",
        variant: "warning",
        durationMs: 8000,
      },
    ]);
    expect(endedLines(host)).toEqual([
      {
        level: "info",
        message: "continuation ended: stopped: 3 times without progress",
        extra: { sessionId: S, reason: "stagnation" },
      },
    ]);
    expect(rows.session(S)).toMatchObject({ notified_stop: "stagnation", directory: ctx.followed.directory });
  });

  it("the same reason again is not news: no toast, no line", async () => {
    const { notices, host } = await boot();
    await notices.tell(S, "stagnation", STAGNATION);
    await notices.tell(S, "stagnation", STAGNATION);
    await notices.tell(S, "stagnation", { unproductiveContinuations: 4 });
    expect(host.toasts).toHaveLength(1);
    expect(endedLines(host)).toHaveLength(1);
  });

  it("another reason is news, and so is the first one once it is no longer the last told", async () => {
    const { notices, host } = await boot();
    await notices.tell(S, "stagnation", STAGNATION);
    await notices.tell(S, "budget_exhausted", { continuations: 20 });
    await notices.tell(S, "stagnation", STAGNATION);
    expect(host.toasts.map((t) => t.message)).toEqual([
      "Stopped: 3 times without progress.\n/resume-continuation to go on.",
      "Stopped: the budget of 20 is spent.\nPalette: Allow more to go on.",
      "Stopped: 3 times without progress.\n/resume-continuation to go on.",
    ]);
    expect(rows.session(S)).toMatchObject({ notified_stop: "stagnation" });
  });

  it("each session is told for itself", async () => {
    const { notices, host } = await boot();
    await notices.tell(S, "stagnation", STAGNATION);
    await notices.tell("ses_other", "stagnation", STAGNATION);
    expect(host.toasts).toHaveLength(2);
  });

  it("durably: a restart (a new process on the same file) does not tell it again", async () => {
    const first = await boot();
    await first.notices.tell(S, "stagnation", STAGNATION);
    first.ctx.timers.stop();
    connections.shift()!.close();
    const restarted = await boot();
    await restarted.notices.tell(S, "stagnation", STAGNATION);
    expect(restarted.host.toasts).toEqual([]);
    expect(endedLines(restarted.host)).toEqual([]);
    await restarted.notices.tell(S, "token_limit", {});
    expect(restarted.host.toasts).toHaveLength(1);
  });

  it("a reason that is no stop tells nothing and writes nothing", async () => {
    const { notices, host } = await boot();
    await notices.tell(S, "busy", {});
    expect(host.toasts).toEqual([]);
    expect(host.logs).toEqual([]);
    expect(rows.session(S)).toBeUndefined();
  });
});

describe("the toast's words", () => {
  it("the explanation and the hint, each a sentence on a line of its own (a command never breaks across two)", async () => {
    const { notices, host } = await boot();
    await notices.tell(S, "token_limit", {});
    expect(host.toasts.map((t) => t.message)).toEqual(["Stopped: the context is full.\nCompact or write to go on."]);
  });

  it("a question is told (remembered, for its notice) but is no toast: the session waits, it did not stop", async () => {
    const { notices, host } = await boot();
    await notices.tell(S, "waiting_for_user", { source: "text_question" });
    expect(host.toasts).toEqual([]);
    expect(endedLines(host)).toEqual([]);
    expect(rows.session(S)).toMatchObject({ notified_stop: "waiting_for_user" });
  });
});

describe("with toast: false", () => {
  it("no toast, but the log line stays and the reason is still told once", async () => {
    const { notices, host } = await boot({ toast: false });
    await notices.tell(S, "stagnation", STAGNATION);
    await notices.tell(S, "stagnation", STAGNATION);
    expect(host.toasts).toEqual([]);
    expect(endedLines(host)).toHaveLength(1);
    expect(rows.session(S)).toMatchObject({ notified_stop: "stagnation" });
  });
});

describe("a toast that fails", () => {
  it.each([
    { how: "rejects", toast: () => Promise.reject(new Error("TUI gone")) },
    {
      how: "throws",
      toast: () => {
        throw new Error("not connected");
      },
    },
  ])("one that $how: tell resolves, the reason is told, nothing is reported failed", async ({ toast }) => {
    const host = new FakeHost();
    host.toast = toast;
    const { notices, ctx } = await boot({}, host);
    const unhandled = await unhandledDuring(async () => {
      await expect(notices.tell(S, "stagnation", STAGNATION)).resolves.toBeUndefined();
      await advance(TIMEOUT_MS);
    });
    expect(unhandled).toEqual([]);
    expect(rows.session(S)).toMatchObject({ notified_stop: "stagnation" });
    expect(endedLines(host)).toHaveLength(1);
    expect(ctx.failures).toEqual([]);
  });

  it("one that hangs: tell does not wait for it, and it is given up after hostTimeoutMs without a trace", async () => {
    const host = new FakeHost();
    let asked = 0;
    host.toast = () => (asked++, new Promise<void>(() => {}));
    const { notices, ctx } = await boot({}, host);
    const unhandled = await unhandledDuring(async () => {
      await notices.tell(S, "stagnation", STAGNATION);
      expect(asked).toBe(1);
      expect(rows.session(S)).toMatchObject({ notified_stop: "stagnation" });
      // The bound's own timer is all that is left of it.
      expect(vi.getTimerCount()).toBe(1);
      await advance(TIMEOUT_MS);
      expect(vi.getTimerCount()).toBe(0);
    });
    expect(unhandled).toEqual([]);
    expect(ctx.failures).toEqual([]);
  });
});
