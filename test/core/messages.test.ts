import { describe, expect, it } from "vitest";
import {
  classifyUserMessage,
  inspectMessages,
  isQuestionTool,
  type InspectOptions,
  type SessionMessage,
} from "../../src/core/messages.js";
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
/** The enforcer's own continuations: message id → injection id, as the database and the process know them. */
const ours = new Map<string, string>();
const own = (id: string, injectionId = "inj_000000001") => {
  ours.set(id, injectionId);
  return user(id, `reminder\n${idLine(injectionId)}`);
};
const inspect = (messages: readonly SessionMessage[], options: InspectOptions = {}) =>
  inspectMessages(messages, { ours, ...options });

describe("inspectMessages", () => {
  it("takes the agent, model and variant of the latest real user message", () => {
    const facts = inspect([
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
    const facts = inspect([
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
    expect(inspect(aborted).unansweredErrorKind).toBe("abort");
    expect(inspect([...aborted, user("3", "again")]).unansweredErrorKind).toBeUndefined();
    const overflow = [
      user("1", "go"),
      assistant("2", { error: { name: "APIError", message: "context length exceeded" } }),
    ];
    expect(inspect(overflow).unansweredErrorKind).toBe("token_limit");
    const unauthorized = [
      user("1", "go"),
      assistant("2", { error: { name: "APIError", statusCode: 401, isRetryable: false, message: "Unauthorized" } }),
    ];
    expect(inspect(unauthorized)).toMatchObject({
      unansweredErrorKind: "permanent",
      unansweredError: { statusCode: 401 },
    });
  });

  it("says when the last turn ended well: its completion, else its creation; null when none did", () => {
    expect(inspect([user("1", "go"), assistant("2", { createdAt: 5, completedAt: 9 })]).turnEndedWellAt).toBe(9);
    expect(inspect([user("1", "go"), assistant("2", { createdAt: 5, completedAt: undefined })]).turnEndedWellAt).toBe(
      5,
    );
    expect(inspect([user("1", "go")]).turnEndedWellAt).toBeNull();
    const failed = [user("1", "go"), assistant("2", { completedAt: 9, error: { name: "ProviderAuthError" } })];
    expect(inspect(failed).turnEndedWellAt).toBeNull();
    // A person's message after it does not make the failed turn end well.
    expect(inspect([...failed, user("3", "again")]).turnEndedWellAt).toBeNull();
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
      expect(inspect([user("1", "go"), assistant("2", { parts: [tool(name, "running")] })]).unfinishedQuestion).toBe(
        true,
      );
    }
    expect(
      inspect([user("1", "go"), assistant("2", { parts: [tool("question", "completed")] })]).unfinishedQuestion,
    ).toBe(false);
    expect(isQuestionTool("bash")).toBe(false);
  });

  it("a question asked in text at the end of the last message is found, unless the option is off or someone spoke since", () => {
    const asked = [
      user("1", "go"),
      assistant("2", { parts: said("Tests pass. Should I also migrate the old records?") }),
    ];
    expect(inspect(asked).textQuestion).toBe("Should I also migrate the old records?");
    expect(inspect(asked, { detectTextQuestions: false }).textQuestion).toBeUndefined();
    expect(inspect([...asked, user("3", "yes")]).textQuestion).toBeUndefined();
    const errored = [
      user("1", "go"),
      assistant("2", { parts: said("Should I?"), error: { name: "APIError", statusCode: 500 } }),
    ];
    expect(inspect(errored).textQuestion).toBeUndefined();
    const synthetic = [
      user("1", "go"),
      assistant("2", {
        parts: [
          { type: "text", text: "Which one?", synthetic: true },
          { type: "text", text: "Done." },
        ],
      }),
    ];
    expect(inspect(synthetic).textQuestion).toBeUndefined();
  });

  it("a person quoting our id line is a person: no injection of ours, a reply answers them", () => {
    const messages = [
      user("1", "go"),
      own("2", "inj_000000007"),
      assistant("3"),
      user("4", `why ${idLine("inj_000000007")}?`),
      assistant("5", { parts: said("Because.") }),
    ];
    const facts = inspect(messages);
    expect(facts.ownMessageIds).toEqual(["2"]);
    expect(facts.ownInjectionIds).toEqual(["inj_000000007"]);
    expect(facts.latestReal?.messageId).toBe("4");
    expect(facts.replyToLastInjection).toBeUndefined();
    // Text alone never makes a message ours.
    expect(inspectMessages(messages).ownInjectionIds).toEqual([]);
  });

  it("says what the model did in reply to the last continuation", () => {
    const base = [user("1", "go"), assistant("2"), own("3")];
    expect(inspect(base).replyToLastInjection).toBe("none");
    expect(inspect([...base, assistant("4", { parts: said("All done!") })]).replyToLastInjection).toBe("text_only");
    expect(
      inspect([...base, assistant("4", { parts: [tool("todowrite")] }), assistant("5", { parts: said("Updated.") })])
        .replyToLastInjection,
    ).toBe("text_only");
    expect(
      inspect([...base, assistant("4", { parts: [tool("bash")] }), assistant("5", { parts: said("Fixed.") })])
        .replyToLastInjection,
    ).toBe("worked");
    expect(inspect([...base, assistant("4", { parts: [{ type: "patch" }] })]).replyToLastInjection).toBe("worked");
    expect(
      inspect([...base, assistant("4", { error: { name: "APIError", statusCode: 503 } })]).replyToLastInjection,
    ).toBe("errored");
    expect(inspect([...base, assistant("4"), user("5", "stop")]).replyToLastInjection).toBeUndefined();
    expect(inspect([user("1", "go"), assistant("2")]).replyToLastInjection).toBeUndefined();
  });

  it("tells whether a user message answered a question the assistant had asked", () => {
    const messages = [
      user("1", "go"),
      assistant("2", { parts: said("Which database do you prefer, SQLite or PostgreSQL?") }),
      user("3", "SQLite"),
      assistant("4", { parts: said("Done with the schema.") }),
      user("5", "Stop. Let me look at the parser first."),
    ];
    expect(inspect(messages, { answerOf: "3" }).answersQuestion).toBe(true);
    expect(inspect(messages, { answerOf: "5" }).answersQuestion).toBe(false);
    expect(inspect(messages, { answerOf: "nope" }).answersQuestion).toBeUndefined();
    const viaTool = [user("1", "go"), assistant("2", { parts: [tool("question")] }), user("3", "blue")];
    expect(inspect(viaTool, { answerOf: "3" }).answersQuestion).toBe(true);
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
    expect(inspect(messages).compaction).toBe(state);
  });
});

describe("classifyUserMessage: one rule for live events and for messages read back", () => {
  it.each<[string, SessionMessage, string]>([
    ["a person's text", user("1", "hello"), "real"],
    ["our continuation: its message id is one the enforcer chose", own("own-1"), "own"],
    [
      "our continuation, quiet: the prompt as a synthetic part, then one visible line",
      user("own-quiet", "", {
        parts: [
          { type: "text", text: `reminder\n${idLine("inj_000000002")}`, synthetic: true },
          { type: "text", text: '↻ todo-continuation: 1/3 done, continuing with "b"' },
        ],
      }),
      "own",
    ],
    [
      "the visible line of one of ours before its prompt part, its message id ours",
      user("own-line", '↻ todo-continuation: 1/3 done, continuing with "b"'),
      "own",
    ],
    ["a person quoting our id line", user("1", `what is ${idLine("inj_000000001")}?`), "real"],
    ["a person typing our transcript line", user("1", '↻ todo-continuation: 1/3 done, continuing with "b"'), "real"],
    [
      "a person attaching a file whose synthetic part carries an id line",
      user("1", "", {
        parts: [
          { type: "text", text: `Called the Read tool\n${idLine("inj_000000001")}`, synthetic: true },
          { type: "text", text: "what is this?" },
        ],
      }),
      "real",
    ],
    ["our prompt's text with a message id not ours", user("1", `reminder\n${idLine("inj_000000001")}`), "real"],
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
    ours.set("own-line", "inj_000000003").set("own-quiet", "inj_000000002");
    expect(classifyUserMessage(message, ours)).toBe(kind);
  });
});
