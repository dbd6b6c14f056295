import { describe, expect, it } from "vitest";
import { classifyUserMessage, inspectMessages, isQuestionTool, type SessionMessage } from "../../src/core/messages.js";
import { COMMAND_NOTE_PREFIX, idLine } from "../../src/core/prompt.js";

const user = (id: string, text: string, extra: Partial<SessionMessage> = {}): SessionMessage => ({
  id,
  role: "user",
  agent: "build",
  providerId: "p",
  modelId: "m",
  parts: [{ type: "text", text }],
  ...extra,
});
const assistant = (id: string, extra: Partial<SessionMessage> = {}): SessionMessage => ({
  id,
  role: "assistant",
  completedAt: 1,
  parts: [],
  ...extra,
});
const said = (text: string) => [{ type: "text", text }];
const tool = (name: string, status = "completed") => ({ type: "tool", tool: name, toolStatus: status });
const own = (id: string, injectionId = "inj_000000001") => user(id, `reminder\n${idLine(injectionId)}`);

describe("inspectMessages", () => {
  it("takes the agent, model and variant of the latest real user message", () => {
    const facts = inspectMessages([
      user("1", "hi", { agent: "plan" }),
      assistant("2"),
      user("3", "go", { agent: "build", providerId: "openai", modelId: "gpt", variant: "high" }),
      assistant("4"),
    ]);
    expect(facts.latestReal).toMatchObject({
      messageId: "3",
      agent: "build",
      providerId: "openai",
      modelId: "gpt",
      variant: "high",
    });
  });

  it("recognises its own injections by their id and never takes compaction as the agent", () => {
    const facts = inspectMessages([
      user("1", "go", { agent: "build" }),
      own("2"),
      user("3", "summarize", { agent: "compaction", parts: [{ type: "compaction" }] }),
      assistant("4", { agent: "compaction", summary: true }),
    ]);
    expect(facts.ownInjectionIds).toEqual(["inj_000000001"]);
    expect(facts.ownMessageIds).toEqual(["2"]);
    expect(facts.latestReal?.messageId).toBe("2");
    expect(facts.compaction).toBe("finished");
  });

  it("an error in the last assistant message counts until a real user message follows it", () => {
    const aborted = [user("1", "go"), assistant("2", { error: { name: "MessageAbortedError" } })];
    expect(inspectMessages(aborted).unansweredErrorKind).toBe("abort");
    expect(inspectMessages([...aborted, user("3", "again")]).unansweredErrorKind).toBeUndefined();
    const overflow = [
      user("1", "go"),
      assistant("2", { error: { name: "APIError", message: "context length exceeded" } }),
    ];
    expect(inspectMessages(overflow).unansweredErrorKind).toBe("token_limit");
    const unauthorized = [
      user("1", "go"),
      assistant("2", { error: { name: "APIError", statusCode: 401, isRetryable: false, message: "Unauthorized" } }),
    ];
    expect(inspectMessages(unauthorized)).toMatchObject({
      unansweredErrorKind: "permanent",
      unansweredError: { statusCode: 401 },
    });
  });

  it("finds an unanswered question tool call, also under the names other agents use", () => {
    for (const name of [
      "question",
      "ask_user_question",
      "AskUserQuestion",
      "ask_followup_question",
      "request_user_input",
    ]) {
      expect(isQuestionTool(name)).toBe(true);
      expect(
        inspectMessages([user("1", "go"), assistant("2", { parts: [tool(name, "running")] })]).unfinishedQuestion,
      ).toBe(true);
    }
    expect(
      inspectMessages([user("1", "go"), assistant("2", { parts: [tool("question", "completed")] })]).unfinishedQuestion,
    ).toBe(false);
    expect(isQuestionTool("bash")).toBe(false);
  });

  it("a question asked in text at the end of the last message is found, unless the option is off or someone spoke since", () => {
    const asked = [
      user("1", "go"),
      assistant("2", { parts: said("Tests pass. Should I also migrate the old records?") }),
    ];
    expect(inspectMessages(asked).textQuestion).toBe("Should I also migrate the old records?");
    expect(inspectMessages(asked, { detectTextQuestions: false }).textQuestion).toBeUndefined();
    expect(inspectMessages([...asked, user("3", "yes")]).textQuestion).toBeUndefined();
    const errored = [
      user("1", "go"),
      assistant("2", { parts: said("Should I?"), error: { name: "APIError", statusCode: 500 } }),
    ];
    expect(inspectMessages(errored).textQuestion).toBeUndefined();
    const synthetic = [
      user("1", "go"),
      assistant("2", {
        parts: [
          { type: "text", text: "Which one?", synthetic: true },
          { type: "text", text: "Done." },
        ],
      }),
    ];
    expect(inspectMessages(synthetic).textQuestion).toBeUndefined();
  });

  it("says what the model did in reply to the last continuation", () => {
    const base = [user("1", "go"), assistant("2"), own("3")];
    expect(inspectMessages(base).replyToLastInjection).toBe("none");
    expect(inspectMessages([...base, assistant("4", { parts: said("All done!") })]).replyToLastInjection).toBe(
      "text_only",
    );
    expect(
      inspectMessages([
        ...base,
        assistant("4", { parts: [tool("todowrite")] }),
        assistant("5", { parts: said("Updated.") }),
      ]).replyToLastInjection,
    ).toBe("text_only");
    expect(
      inspectMessages([...base, assistant("4", { parts: [tool("bash")] }), assistant("5", { parts: said("Fixed.") })])
        .replyToLastInjection,
    ).toBe("worked");
    expect(inspectMessages([...base, assistant("4", { parts: [{ type: "patch" }] })]).replyToLastInjection).toBe(
      "worked",
    );
    expect(
      inspectMessages([...base, assistant("4", { error: { name: "APIError", statusCode: 503 } })]).replyToLastInjection,
    ).toBe("errored");
    expect(inspectMessages([...base, assistant("4"), user("5", "stop")]).replyToLastInjection).toBeUndefined();
    expect(inspectMessages([user("1", "go"), assistant("2")]).replyToLastInjection).toBeUndefined();
  });

  it("tells whether a user message answered a question the assistant had asked", () => {
    const messages = [
      user("1", "go"),
      assistant("2", { parts: said("Which database do you prefer, SQLite or PostgreSQL?") }),
      user("3", "SQLite"),
      assistant("4", { parts: said("Done with the schema.") }),
      user("5", "Stop. Let me look at the parser first."),
    ];
    expect(inspectMessages(messages, { answerOf: "3" }).answersQuestion).toBe(true);
    expect(inspectMessages(messages, { answerOf: "5" }).answersQuestion).toBe(false);
    expect(inspectMessages(messages, { answerOf: "nope" }).answersQuestion).toBeUndefined();
    const viaTool = [user("1", "go"), assistant("2", { parts: [tool("question")] }), user("3", "blue")];
    expect(inspectMessages(viaTool, { answerOf: "3" }).answersQuestion).toBe(true);
  });
});

describe("compaction", () => {
  const request = user("2", "", { parts: [{ type: "compaction" }] });
  const summary = (extra: Partial<SessionMessage> = {}) =>
    assistant("3", { agent: "compaction", summary: true, ...extra });

  it.each<[string, SessionMessage[], string | undefined]>([
    ["requested, not started", [user("1", "go"), request], "running"],
    ["summary streaming", [user("1", "go"), request, summary({ completedAt: undefined })], "running"],
    ["finished, nothing since", [user("1", "go"), request, summary()], "finished"],
    [
      "finished, OpenCode's own synthetic follow-up only",
      [
        user("1", "go"),
        request,
        summary(),
        user("4", "Continue if you have next steps", {
          parts: [{ type: "text", text: "Continue if you have next steps", synthetic: true }],
        }),
      ],
      "finished",
    ],
    [
      "finished, the replayed last user message only",
      [user("1", "go"), request, summary(), user("4", "go")],
      "finished",
    ],
    [
      "finished, then the assistant went on",
      [user("1", "go"), request, summary(), assistant("4", { parts: said("Next step…") })],
      undefined,
    ],
    ["finished, then a real user message", [user("1", "go"), request, summary(), user("4", "new work")], undefined],
    ["no compaction", [user("1", "go"), assistant("2")], undefined],
  ])("%s", (_what, messages, state) => {
    expect(inspectMessages(messages).compaction).toBe(state);
  });
});

describe("classifyUserMessage: one rule for live events and for messages read back", () => {
  it.each<[string, SessionMessage, string]>([
    ["a person's text", user("1", "hello"), "real"],
    ["our continuation", own("1"), "own"],
    [
      "our continuation, quiet: the prompt as a synthetic part, then one visible line",
      user("1", "", {
        parts: [
          { type: "text", text: `reminder\n${idLine("inj_000000002")}`, synthetic: true },
          { type: "text", text: '↻ todo-continuation: 1/3 done, continuing with "b"' },
        ],
      }),
      "own",
    ],
    [
      "only the visible line of one of ours (seen before its prompt part)",
      user("1", '↻ todo-continuation: 1/3 done, continuing with "b"'),
      "own",
    ],
    ["our command note", user("1", `${COMMAND_NOTE_PREFIX} Automatic todo continuation is resumed.`), "command"],
    [
      "only synthetic text",
      user("1", "", { parts: [{ type: "text", text: "Continue", synthetic: true }] }),
      "synthetic",
    ],
    ["a compaction request", user("1", "", { parts: [{ type: "compaction" }] }), "synthetic"],
    [
      "a synthetic part first, then the person's text",
      user("1", "", {
        parts: [
          { type: "text", text: "Called the Read tool", synthetic: true },
          { type: "text", text: "look at this file" },
        ],
      }),
      "real",
    ],
    [
      "the person's text, then a synthetic part",
      user("1", "", {
        parts: [
          { type: "text", text: "look at this file" },
          { type: "text", text: "<file>…</file>", synthetic: true },
        ],
      }),
      "real",
    ],
    ["a file only", user("1", "", { parts: [{ type: "file" }] }), "real"],
    ["no parts (yet)", user("1", "", { parts: [] }), "real"],
  ])("%s → %s", (_what, message, kind) => {
    expect(classifyUserMessage(message)).toBe(kind);
  });
});
