// Continue when the user would want it, stop when the user would: the user stepping in, replies that do no work,
// churn, questions asked in text, provider errors, sub-sessions, compaction, and an idle lost to a crash. A real
// engine on a real SQLite file, OpenCode played by a scripted host.
import { describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/resolve.js";
import type { SessionMessage } from "../../../src/core/messages.js";
import { idLine } from "../../../src/core/prompt.js";
import { ev } from "../../support/events.js";
import { FakeHost } from "../../support/fake-host.js";
import { startEngine, type EngineFixture } from "../../support/engine-fixture.js";
import { advance, settle as settleEngine, useFakeTime } from "../../support/fake-time.js";

const S = "ses_judgement";
let f: EngineFixture;

async function boot(config: Partial<Config> = {}, host = new FakeHost()) {
  f = await startEngine({ host, config: { retryBaseMs: 1000, retryMaxMs: 8000, ...config } });
  f.host.addUserMessage(S, "build the thing");
  f.host.setTodos(S, [
    ["parse", "completed"],
    ["test", "in_progress"],
    ["docs", "pending"],
  ]);
}

const settle = () => settleEngine(f);

/** An idle, the countdown, and whatever follows. */
async function idleAndWait(ms = 2100) {
  f.enforcer.handleEvent(ev.idle(S));
  await advance(ms);
  await settle();
}

/** A real user message as OpenCode publishes it, and its turn. */
function userSays(text: string) {
  const message = ev.userMessage(S);
  f.enforcer.handleEvent(message);
  f.enforcer.handleEvent(ev.textPart(S, message.properties.info.id, text));
  f.host.addUserMessage(S, text, { id: message.properties.info.id });
  return message.properties.info.id;
}

function assistantSays(text: string, extra: Partial<SessionMessage> = {}) {
  f.host.addAssistantMessage(S, { parts: [{ type: "text", text }], ...extra });
  f.enforcer.handleEvent(ev.assistantMessage(S));
}

const sent = () => f.host.prompts.length;
const skips = () =>
  f.rows
    .audit(S)
    .filter((r) => r.event === "skipped")
    .map((r) => r.reason);

useFakeTime(() => f);

describe("§2 the user stepped in after a continuation", () => {
  it("pauses until the todos progress; the skip names the message and its time; a restart keeps it", async () => {
    await boot();
    await idleAndWait();
    expect(sent()).toBe(1);
    const messageId = userSays("Stop. Let me look at the parser first.");
    assistantSays("Understood.");
    await idleAndWait();
    expect(sent()).toBe(1);
    expect(f.rows.audit(S).at(-1)).toMatchObject({
      event: "skipped",
      reason: "user_took_over",
      detail: { messageId, pausedAt: expect.any(Number) },
    });

    const { folder, host } = f;
    await f.close();
    f = await startEngine({ folder, host, config: { retryBaseMs: 1000 } });
    await idleAndWait();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ reason: "user_took_over" });

    f.host.setTodos(S, [
      ["parse", "completed"],
      ["test", "completed"],
      ["docs", "pending"],
    ]);
    await idleAndWait();
    expect(sent()).toBe(2);
    expect(f.rows.audit(S).find((r) => r.event === "armed" && r.detail.pauseLifted)).toMatchObject({
      detail: { pauseLifted: "progress" },
    });
    expect(f.rows.session(S)).toMatchObject({ paused_at: null, pause_message_id: null });
  });

  it("churn does not lift it; a rewritten list does", async () => {
    await boot();
    await idleAndWait();
    userSays("wait");
    f.host.setTodos(S, [
      ["parse", "completed"],
      ["test", "pending"],
      ["docs", "pending"],
    ]);
    await idleAndWait();
    expect(skips().at(-1)).toBe("user_took_over");
    f.host.setTodos(S, [
      ["new plan: step 1", "pending"],
      ["new plan: step 2", "pending"],
    ]);
    await idleAndWait();
    expect(sent()).toBe(2);
    expect(
      f.rows
        .audit(S)
        .filter((r) => r.event === "armed")
        .at(-1),
    ).toMatchObject({ detail: { pauseLifted: "rewritten" } });
  });

  it("/resume-continuation (or the API) lifts it", async () => {
    await boot();
    await idleAndWait();
    userSays("let me check something");
    await idleAndWait();
    expect(skips().at(-1)).toBe("user_took_over");
    expect(await f.enforcer.resume(S, "api")).toBe(true);
    await advance(2100);
    await settle();
    expect(sent()).toBe(2);
    expect(f.rows.audit(S).find((r) => r.event === "unstopped")).toMatchObject({
      reason: "api",
      detail: { paused: true },
    });
  });

  it("a user message in a session never continued (an ordinary turn) does not pause", async () => {
    await boot();
    userSays("please also update the changelog");
    await idleAndWait();
    expect(sent()).toBe(1);
    expect(skips()).not.toContain("user_took_over");
  });

  it("new work given after our continuations finished every todo is not a takeover", async () => {
    await boot();
    await idleAndWait();
    f.enforcer.handleEvent(
      ev.todos(S, [
        ["parse", "completed"],
        ["test", "completed"],
        ["docs", "completed"],
      ]),
    );
    userSays("Great. Now add a --verbose flag.");
    expect(f.rows.session(S)).toMatchObject({ paused_at: null });
    f.host.setTodos(S, [
      ["parse", "completed"],
      ["test", "completed"],
      ["docs", "completed"],
      ["add --verbose", "pending"],
    ]);
    await idleAndWait();
    expect(sent()).toBe(2);
  });

  it("an answer to the assistant's question is not a takeover", async () => {
    await boot();
    await idleAndWait();
    assistantSays("Should I use PostgreSQL or SQLite for the cache?");
    await idleAndWait();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ reason: "waiting_for_user", detail: { source: "text_question" } });
    userSays("SQLite");
    assistantSays("Done with the cache layer.", {
      parts: [
        { type: "tool", tool: "edit", toolStatus: "completed" },
        { type: "text", text: "Done with the cache layer." },
      ],
    });
    await idleAndWait();
    expect(sent()).toBe(2);
    expect(
      f.rows
        .audit(S)
        .filter((r) => r.event === "armed")
        .at(-1),
    ).toMatchObject({ detail: { pauseLifted: "answered_question" } });
  });

  it("is off with pauseAfterUserMessage: false", async () => {
    await boot({ pauseAfterUserMessage: false });
    await idleAndWait();
    userSays("wait");
    await idleAndWait();
    expect(sent()).toBe(2);
  });

  it("a user message whose first part is synthetic (an attached file) is still the user's", async () => {
    await boot();
    await idleAndWait();
    const message = ev.userMessage(S);
    f.enforcer.handleEvent(message);
    f.enforcer.handleEvent(
      ev.textPart(S, message.properties.info.id, 'Called the Read tool with {"filePath":"a.ts"}', true),
    );
    f.enforcer.handleEvent(ev.textPart(S, message.properties.info.id, "look at this first"));
    await idleAndWait();
    expect(skips().at(-1)).toBe("user_took_over");
    expect(f.rows.session(S)).toMatchObject({ pause_message_id: message.properties.info.id });
  });

  describe("a person's message that looks like ours is a person's", () => {
    const injectionId = () => f.rows.injections(S)[0]!.id;
    it.each<[string, () => Array<[string, boolean]>]>([
      ["quoting our id line", () => [[`Why did you send this? ${idLine(injectionId())}`, false]]],
      ["starting like our transcript line", () => [['↻ todo-continuation: 1/3 done, continuing with "test"', false]]],
      [
        "attaching a file whose synthetic part carries an id line",
        () => [
          [`Called the Read tool with {"filePath":"log.txt"}\n${idLine(injectionId())}`, true],
          ["what is this in the log?", false],
        ],
      ],
    ])("%s: the takeover pause, and the loop counts start over", async (_what, parts) => {
      await boot();
      await idleAndWait();
      expect(f.rows.session(S)).toMatchObject({ continuations: 1 });
      const message = ev.userMessage(S);
      const id = message.properties.info.id;
      f.enforcer.handleEvent(message);
      for (const [text, synthetic] of parts()) f.enforcer.handleEvent(ev.textPart(S, id, text, synthetic));
      f.host.addUserMessage(S, "", {
        id,
        parts: parts().map(([text, synthetic]) => ({ type: "text", text, synthetic })),
      });
      await settle();
      expect(f.rows.session(S)).toMatchObject({ continuations: 0, pause_message_id: id });
      assistantSays("Understood.");
      await idleAndWait();
      expect(sent()).toBe(1);
      expect(skips().at(-1)).toBe("user_took_over");
    });

    it("read back after a restart, the quoting message is a person's: a text-only reply answers them", async () => {
      await boot({ pauseAfterUserMessage: false });
      await idleAndWait();
      const { folder, host } = f;
      const quoted = idLine(injectionId());
      await f.close();
      // Written while no enforcer ran: only the messages read back tell what happened.
      host.addUserMessage(S, `is ${quoted} yours?`);
      host.addAssistantMessage(S, { parts: [{ type: "text", text: "It is." }] });
      f = await startEngine({ folder, host, config: { retryBaseMs: 1000, pauseAfterUserMessage: false } });
      await idleAndWait();
      expect(sent()).toBe(2);
      expect(skips()).not.toContain("no_progress_reply");
    });

    it("our continuation read back in a new process is still ours: a text-only reply to it counts", async () => {
      await boot();
      f.host.autoReply = false;
      await idleAndWait();
      const { folder, host } = f;
      await f.close();
      host.addAssistantMessage(S, { parts: [{ type: "text", text: "All done, I think." }] });
      f = await startEngine({ folder, host, config: { retryBaseMs: 1000 } });
      await idleAndWait();
      expect(sent()).toBe(1);
      expect(skips().at(-1)).toBe("no_progress_reply");
    });
  });

  it("our own command's note is not a takeover", async () => {
    await boot();
    await idleAndWait();
    const message = ev.userMessage(S);
    f.enforcer.handleEvent(message);
    f.enforcer.handleEvent(
      ev.textPart(
        S,
        message.properties.info.id,
        "[todo-continuation] Automatic todo continuation is resumed for this session.",
      ),
    );
    expect(f.rows.session(S)).toMatchObject({ paused_at: null, continuations: 1 });
  });
});

describe("§3 replies that do no work, and churn", () => {
  it("a text-only reply to a continuation stops it after unproductiveLimit (1)", async () => {
    await boot();
    f.host.autoReply = false;
    await idleAndWait();
    assistantSays("All done!");
    await idleAndWait();
    expect(sent()).toBe(1);
    expect(f.rows.audit(S).at(-1)).toMatchObject({
      reason: "no_progress_reply",
      detail: { textOnlyReplies: 1, limit: 1 },
    });
  });

  it("a continuation whose call timed out is sent again: the reply before it, which closed a todo, is not judged twice", async () => {
    await boot();
    f.host.autoReply = false;
    await idleAndWait();
    expect(sent()).toBe(1);
    // The reply writes the todos (bookkeeping, not work) and closes one: progress, so the next one goes out...
    f.host.setTodos(S, [
      ["parse", "completed"],
      ["test", "completed"],
      ["docs", "pending"],
    ]);
    assistantSays("Tests pass.");
    // ...and its call times out: it may have arrived, so it counts (the todos now its baseline). Looked for, it is
    // not there, and is sent again after the backoff, against the same reply and the same todos.
    f.host.promptScript = ["hang"];
    f.enforcer.handleEvent(ev.idle(S));
    const retried = () => f.rows.audit(S).some((r) => r.event === "injected" && r.detail.attempt === 1);
    const ended = () => skips().includes("no_progress_reply");
    for (let t = 0; t < 120 && !retried() && !ended(); t++) await advance(1000);
    expect(f.rows.trail(S)).toContain("injection_failed:timeout");
    expect(skips()).not.toContain("no_progress_reply");
    expect(sent()).toBe(2);
  });

  it("with unproductiveLimit: 2, a second text-only reply in a row stops it", async () => {
    await boot({ unproductiveLimit: 2 });
    f.host.autoReply = false;
    await idleAndWait();
    assistantSays("Everything is complete.");
    await idleAndWait();
    expect(sent()).toBe(2);
    assistantSays("As I said, all done.");
    await idleAndWait();
    expect(sent()).toBe(2);
    expect(skips().at(-1)).toBe("no_progress_reply");
  });

  it("a reply that did work but moved no status keeps stagnationLimit (3)", async () => {
    await boot();
    for (let i = 0; i < 6; i++) await idleAndWait();
    expect(sent()).toBe(3);
    expect(skips().at(-1)).toBe("stagnation");
  });

  it("status churn stops at stagnationLimit, not at the budget (20 prompts before)", async () => {
    await boot();
    const churn: Array<Array<[string, string]>> = [
      [
        ["parse", "completed"],
        ["test", "pending"],
        ["docs", "in_progress"],
      ],
      [
        ["parse", "completed"],
        ["test", "in_progress"],
        ["docs", "pending"],
      ],
    ];
    for (let i = 0; i < 24; i++) {
      f.host.setTodos(S, churn[i % 2]!);
      await idleAndWait();
    }
    // The first toggle moves "docs" forward once (progress); after that nothing is new: three more, then stop.
    expect(sent()).toBeLessThanOrEqual(5);
    expect(skips()).toContain("stagnation");
    expect(skips()).not.toContain("budget_exhausted");
  });

  it("the continuation prompt asks to re-check the todos and to ask once when only the user can decide", async () => {
    await boot();
    await idleAndWait();
    expect(f.host.prompts[0]!.text).toContain("re-check each open todo and update the list");
    expect(f.host.prompts[0]!.text).toContain("ask once, clearly, and stop");
  });
});

describe("§4 a question asked in plain text", () => {
  it("is not continued; after the user answers, it is", async () => {
    await boot();
    assistantSays("I found two ways to store the cache.\n\nWhich do you prefer: SQLite or a JSON file?");
    await idleAndWait();
    expect(sent()).toBe(0);
    expect(f.rows.audit(S).at(-1)).toMatchObject({
      reason: "waiting_for_user",
      detail: { source: "text_question", question: "Which do you prefer: SQLite or a JSON file?" },
    });
    userSays("SQLite");
    assistantSays("Switched to SQLite.");
    await idleAndWait();
    expect(sent()).toBe(1);
  });

  it("a question mark in code or a URL is not a question; detectTextQuestions: false turns it off", async () => {
    await boot();
    assistantSays(
      "Fixed the lookup:\n\n```ts\nconst id = user?.id ?? null;\n```\n\nDocs: https://example.com/search?q=cache",
    );
    await idleAndWait();
    expect(sent()).toBe(1);
    await f.destroy();
    await boot({ detectTextQuestions: false });
    assistantSays("Should I also migrate the old data?");
    await idleAndWait();
    expect(sent()).toBe(1);
  });

  it("a question tool under another agent's name (ask_user_question) is a pending question", async () => {
    await boot();
    f.host.addAssistantMessage(S, { parts: [{ type: "tool", tool: "ask_user_question", toolStatus: "running" }] });
    await idleAndWait();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ reason: "waiting_for_user", detail: { source: "question_tool" } });
  });
});

describe("§5 provider errors", () => {
  const providerError = (statusCode: number, message: string, headers: Record<string, string> = {}) =>
    ev.providerError(S, statusCode, message, headers);

  it("a transient error is looked at again when its cooldown ends, with exponential backoff, then errors_persist", async () => {
    await boot({ maxRetries: 2, errorCooldownMs: 3000 });
    const deadlines: number[] = [];
    for (let i = 0; i < 4; i++) {
      f.enforcer.handleEvent(providerError(503, "Service Unavailable: overloaded"));
      f.host.addAssistantMessage(S, {
        error: { name: "APIError", statusCode: 503, isRetryable: true, message: "overloaded" },
      });
      const at = Date.now();
      f.enforcer.handleEvent(ev.idle(S));
      await advance(5);
      const armed = f.rows.countdowns(S).find((c) => c.state === "armed");
      if (armed) deadlines.push(Number(armed.deadline_at) - at);
      await advance(30_000);
      await settle();
    }
    expect(deadlines).toEqual([3000, 6000]);
    expect(sent()).toBe(2);
    expect(skips().at(-1)).toBe("errors_persist");
    expect(f.rows.audit(S).find((r) => r.reason === "errors_persist")).toMatchObject({
      detail: { errors: 3, limit: 2 },
    });
  });

  it("a server error's retry-after is honoured", async () => {
    await boot();
    f.enforcer.handleEvent(providerError(503, "Service Unavailable", { "retry-after": "20" }));
    const at = Date.now();
    f.enforcer.handleEvent(ev.idle(S));
    await advance(5);
    expect(Number(f.rows.countdowns(S)[0]!.deadline_at) - at).toBe(20_000);
    await advance(19_000);
    await settle();
    expect(sent()).toBe(0);
    await advance(1100);
    await settle();
    expect(sent()).toBe(1);
  });

  it("the work goes on once the provider recovers: a good turn resets the error count", async () => {
    await boot({ maxRetries: 1 });
    f.enforcer.handleEvent(providerError(500, "Internal Server Error"));
    f.host.addAssistantMessage(S, { error: { name: "APIError", statusCode: 500, isRetryable: true } });
    await idleAndWait(3100);
    expect(sent()).toBe(1);
    f.host.setTodos(S, [
      ["parse", "completed"],
      ["test", "completed"],
      ["docs", "pending"],
    ]);
    await idleAndWait();
    expect(sent()).toBe(2);
    expect(f.rows.session(S)).toMatchObject({ error_streak: 0, last_error_kind: null });
  });

  it.each([
    [401, "Unauthorized: invalid api key"],
    [403, "Forbidden"],
    [400, "Bad request: unknown parameter"],
  ])("a permanent error (%i) is not retried: provider_error until the user acts", async (status, message) => {
    await boot();
    f.enforcer.handleEvent(providerError(status, message));
    f.host.addAssistantMessage(S, { error: { name: "APIError", statusCode: status, isRetryable: false, message } });
    await idleAndWait(30_000);
    expect(sent()).toBe(0);
    expect(f.rows.audit(S).at(-1)).toMatchObject({ reason: "provider_error", detail: { statusCode: status } });
    userSays("fixed the key, go on");
    await idleAndWait();
    expect(sent()).toBe(1);
  });
});

describe("§6 work that is not finished yet", () => {
  it("busy grandchildren hold the parent; when the last one finishes, the parent is looked at again", async () => {
    await boot();
    f.host.children.set(S, ["ses_child"]);
    f.host.children.set("ses_child", ["ses_grandchild_1", "ses_grandchild_2"]);
    f.host.statuses = { ses_grandchild_1: "busy", ses_grandchild_2: "busy" };
    await idleAndWait();
    expect(f.rows.audit(S).at(-1)).toMatchObject({
      reason: "children_running",
      detail: { busyChildren: 2, sessions: ["ses_grandchild_1", "ses_grandchild_2"] },
    });
    f.host.statuses = { ses_grandchild_2: "busy" };
    f.enforcer.handleEvent(ev.status("ses_grandchild_1", "idle"));
    await settle();
    expect(sent()).toBe(0);
    f.host.statuses = {};
    f.enforcer.handleEvent(ev.idle("ses_grandchild_2"));
    await advance(5);
    expect(
      f.rows
        .audit(S)
        .filter((r) => r.event === "armed")
        .at(-1),
    ).toMatchObject({ detail: { trigger: "children_done" } });
    await advance(2100);
    await settle();
    expect(sent()).toBe(1);
  });

  it("after a compaction finished, nothing until the next real activity (state finished)", async () => {
    await boot();
    f.enforcer.handleEvent(ev.compacted(S));
    await idleAndWait();
    expect(f.rows.audit(S).at(-1)).toMatchObject({ reason: "compaction", detail: { state: "finished" } });
    f.enforcer.handleEvent(ev.assistantMessage(S));
    await idleAndWait();
    expect(sent()).toBe(1);
  });

  it("a context overflow that OpenCode compacted away by itself no longer holds the session (token_limit lifts)", async () => {
    await boot();
    f.enforcer.handleEvent({
      type: "session.error",
      properties: {
        sessionID: S,
        error: { name: "ContextOverflowError", data: { message: "maximum context length is 8192 tokens" } },
      },
    });
    await settle();
    expect(f.rows.session(S)).toMatchObject({ token_limit_at: expect.any(Number) });
    f.enforcer.handleEvent(ev.compacted(S));
    f.enforcer.handleEvent(ev.assistantMessage(S)); // OpenCode goes on after its automatic compaction
    await settle();
    expect(f.rows.session(S)).toMatchObject({ token_limit_at: null });
    await idleAndWait();
    expect(sent()).toBe(1);
  });

  it("continueAfterCompaction: continued with the real agent, read from the messages even when the row has none", async () => {
    await boot({ continueAfterCompaction: true });
    f.host.addUserMessage(S, "", { agent: "build", parts: [{ type: "compaction" }] });
    f.host.addAssistantMessage(S, { agent: "compaction", summary: true });
    f.enforcer.handleEvent(ev.compacted(S));
    await idleAndWait();
    expect(sent()).toBe(1);
    expect(f.host.prompts[0]).toMatchObject({ agent: "build" });
  });

  // The engine stops while its read of OpenCode hangs: shutdown waits for the read to time out, and the recheck stays
  // owed in the row, as after a crash.
  const shutDownDuringTheRead = async () => {
    const closing = f.close();
    await advance(5000);
    await closing;
  };

  it("an idle lost in a crash while OpenCode was being read is looked at after the restart", async () => {
    const host = new FakeHost();
    await boot({ hostTimeoutMs: 5000 }, host);
    host.todoBehaviour = "hang";
    f.enforcer.handleEvent(ev.idle(S));
    await advance(100);
    expect(f.rows.session(S)).toMatchObject({ recheck_at: expect.any(Number) });
    const { folder } = f;
    await shutDownDuringTheRead();
    host.todoBehaviour = "ok";
    f = await startEngine({ folder, host, config: { resumeWindowSeconds: 60 } });
    await advance(5);
    expect(f.rows.audit(S).at(-1)).toMatchObject({ event: "armed", detail: { trigger: "restart" } });
    await advance(2100);
    await settle();
    expect(sent()).toBe(1);
    // Owed until the continuation's turn is seen starting (startTimeoutMs).
    await advance(10_000);
    await settle();
    expect(f.rows.session(S)).toMatchObject({ recheck_at: null });
  });

  it("…but not when the restart comes later than resumeWindowSeconds (expired, audited)", async () => {
    const host = new FakeHost();
    await boot({ hostTimeoutMs: 5000 }, host);
    host.todoBehaviour = "hang";
    f.enforcer.handleEvent(ev.idle(S));
    await advance(100);
    const { folder } = f;
    await shutDownDuringTheRead();
    await advance(120_000);
    host.todoBehaviour = "ok";
    f = await startEngine({ folder, host, config: { resumeWindowSeconds: 60 } });
    await advance(3000);
    await settle();
    expect(sent()).toBe(0);
    expect(f.rows.audit(S).at(-1)).toMatchObject({
      event: "expired",
      reason: "stale_after_restart",
      detail: { recheck: true },
    });
  });
});
