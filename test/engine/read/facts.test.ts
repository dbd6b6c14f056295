// FactGatherer reads what the guards need from OpenCode. It promises: every read of a look (todos, messages, the
// session, the statuses and sub-sessions, the agents) is asked at once and none waits longer than hostTimeoutMs; a
// todo read that fails, times out or answers something that is not a list is `fetch_failed` with the reason in
// `todoError`, while any other read that fails only leaves its fact out; the tree of sub-sessions is searched only
// when some session other than this one is busy, at most six levels deep and only while fewer than 200 sessions have
// been seen, within the same bound (a search that runs out of time loses the busy descendants, not the status); the
// agent list is asked at most once a minute; `turnStarted` says true when the session is busy (or retrying) or an
// assistant message follows ours, false when OpenCode shows neither, and undefined when it cannot be read;
// `inspectOptions` reads messages with the configured text-question detection and the message that paused the
// session. Built as enforcer.ts builds it, over the engine's context on a real SQLite file and the FakeHost, with
// fake timers for the time it waits.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/resolve.js";
import type { SessionStatus } from "../../../src/core/events.js";
import { FactGatherer, inspectOptions, type HostFacts } from "../../../src/engine/read/facts.js";
import type { HostPort } from "../../../src/host/port.js";
import { changeSession } from "../../../src/store/changes/change-session.js";
import { q } from "../../../src/store/script.js";
import { folder, makeContext, store, type TestContext, useTestFiles } from "../../support/engine-context.js";
import { DIRECTORY, testConfig } from "../../support/engine-fixture.js";
import { FakeHost } from "../../support/fake-host.js";
import { advance } from "../../support/fake-time.js";

const S = "ses_facts";
const TIMEOUT_MS = 1000;
const AGENT_CACHE_MS = 60_000;

let ctx: TestContext;
let host: FakeHost;
let facts: FactGatherer;
let config: Config;

/** The gatherer as the enforcer builds it: on the host, hostTimeoutMs, and the context's monotonic clock. */
function build(overrides: Partial<Config> = {}) {
  config = testConfig(join(folder, "state.db"), { hostTimeoutMs: TIMEOUT_MS, ...overrides });
  host = new FakeHost();
  ctx = makeContext({ store, config, host });
  facts = new FactGatherer(host, config.hostTimeoutMs, () => ctx.clock.monotonic());
}

/** A promise's state without waiting for it. */
function watch<T>(promise: Promise<T>) {
  const seen: { settled: boolean; value?: T } = { settled: false };
  void promise.then((value) => Object.assign(seen, { settled: true, value }));
  return seen;
}

/** Counts the sessions whose sub-sessions were asked for. */
function countChildReads(): string[] {
  const asked: string[] = [];
  const original = host.getChildren.bind(host);
  host.getChildren = (id) => {
    asked.push(id);
    return original(id);
  };
  return asked;
}

useTestFiles();
beforeEach(() => {
  build();
});

afterEach(() => {
  ctx.timers.stop();
});

describe("gather", () => {
  it("answers every fact OpenCode has: the todos, the messages inspected, the parent, the status, the agents", async () => {
    host.setTodos(S, [
      ["a", "completed"],
      ["b", "pending"],
    ]);
    const mine = host.addUserMessage(S, "build the thing", { agent: "plan" });
    host.addAssistantMessage(S);
    host.children.set("ses_parent", [S]);
    host.statuses = { [S]: "busy" };
    const limits: Array<number | undefined> = [];
    const getMessages = host.getMessages.bind(host);
    host.getMessages = (id, signal, limit) => (limits.push(limit), getMessages(id, signal, limit));

    expect(await facts.gather(S)).toEqual({
      todos: [
        { content: "a", status: "completed", priority: "medium" },
        { content: "b", status: "pending", priority: "medium" },
      ],
      messages: expect.objectContaining({
        latestReal: expect.objectContaining({ messageId: mine.id, agent: "plan" }),
        unfinishedQuestion: false,
        ownInjectionIds: [],
      }),
      parentId: "ses_parent",
      status: "busy",
      busyDescendants: [],
      agents: host.agents,
    } satisfies HostFacts);
    // Enough of the latest messages to find the last real one in a long autonomous run, not the whole session.
    expect(limits).toEqual([60]);
  });

  it("carries the whole session's spend when OpenCode reports it (what a continuation's bill is a share of)", async () => {
    const spend = { cost: 0.42, tokens: { input: 900, output: 80, reasoning: 5, cacheRead: 300, cacheWrite: 0 } };
    host.sessions.set(S, { id: S, spend });
    expect((await facts.gather(S)).sessionSpend).toEqual(spend);
  });

  it("a session OpenCode lists as not busy is idle, and one without a parent says so (null)", async () => {
    const answer = await facts.gather(S);
    expect(answer).toMatchObject({ todos: [], status: "idle", parentId: null, busyDescendants: [] });
  });

  it("asks every read at once: all five are under way before any of them answers", async () => {
    const asked: string[] = [];
    let answer!: () => void;
    const gate = new Promise<void>((resolve) => (answer = resolve));
    const held =
      <A extends unknown[], R>(name: string, call: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        asked.push(name);
        await gate;
        return call(...args);
      };
    host.getTodos = held("todos", host.getTodos.bind(host));
    host.getMessages = held("messages", host.getMessages.bind(host));
    host.getSession = held("session", host.getSession.bind(host));
    host.getStatuses = held("statuses", host.getStatuses.bind(host));
    host.getAgents = held("agents", host.getAgents.bind(host));
    const gathering = watch(facts.gather(S));
    await advance(0);
    expect(asked.sort()).toEqual(["agents", "messages", "session", "statuses", "todos"]);
    expect(gathering.settled).toBe(false);
    answer();
    await advance(0);
    expect(gathering.value).toMatchObject({ todos: [], status: "idle", agents: host.agents });
  });

  it("waits at most hostTimeoutMs however many reads hang: the todos are then `fetch_failed`, nothing else is known", async () => {
    const never = (signal: AbortSignal) =>
      new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
    host.todoBehaviour = "hang";
    host.messagesBehaviour = "hang";
    host.statusBehaviour = "hang";
    const port: HostPort = host;
    port.getSession = (_id, signal) => never(signal);
    port.getAgents = (signal) => never(signal);
    const gathering = watch(facts.gather(S));
    await advance(TIMEOUT_MS - 1);
    expect(gathering.settled).toBe(false);
    await advance(1);
    expect(gathering.value).toEqual({
      todos: "fetch_failed",
      todoError: `todo read did not answer within ${TIMEOUT_MS} ms`,
    });
  });

  it("a slow todo read that answers within hostTimeoutMs is an answer", async () => {
    host.setTodos(S, [["a", "pending"]]);
    host.todoDelayMs = TIMEOUT_MS - 1;
    const gathering = watch(facts.gather(S));
    await advance(TIMEOUT_MS - 1);
    expect(gathering.value).toMatchObject({ todos: [{ content: "a", status: "pending" }] });
    expect(gathering.value).not.toHaveProperty("todoError");
  });

  it.each([
    { how: "fails", behaviour: "fail" as const, error: "fetch failed" },
    {
      how: "answers something that is not a list",
      behaviour: "garbage" as const,
      error: "OpenCode answered something that is not a todo list",
    },
  ])("a todo read that $how is `fetch_failed`, with why in todoError; the other facts stay", async (c) => {
    host.todoBehaviour = c.behaviour;
    host.addUserMessage(S, "go");
    expect(await facts.gather(S)).toMatchObject({
      todos: "fetch_failed",
      todoError: c.error,
      messages: { latestReal: { agent: "build" } },
      status: "idle",
      agents: host.agents,
    });
  });

  it.each([
    {
      read: "messages read fails",
      left: ["messages"],
      breakIt: () => void (host.messagesBehaviour = "fail"),
    },
    {
      read: "messages read answers garbage",
      left: ["messages"],
      breakIt: () => void (host.messagesBehaviour = "garbage"),
    },
    {
      read: "session read fails",
      left: ["parentId"],
      breakIt: () => void (host.getSession = () => Promise.reject(new Error("no session"))),
    },
    {
      read: "session read finds no session",
      left: ["parentId"],
      breakIt: () => void (host.getSession = () => Promise.resolve(undefined)),
    },
    {
      read: "status read fails",
      left: ["status", "busyDescendants"],
      breakIt: () => void (host.statusBehaviour = "fail"),
    },
    {
      read: "agent list fails",
      left: ["agents"],
      breakIt: () => void (host.getAgents = () => Promise.reject(new Error("no agents"))),
    },
  ])(
    "a $read: that fact is left out (its guard passes), the todos and the rest are known",
    async ({ left, breakIt }) => {
      host.setTodos(S, [["a", "pending"]]);
      breakIt();
      const answer = await facts.gather(S);
      const all = ["todos", "messages", "parentId", "status", "busyDescendants", "agents"];
      expect(Object.keys(answer).sort()).toEqual(all.filter((k) => !left.includes(k)).sort());
      expect(answer.todos).toEqual([{ content: "a", status: "pending", priority: "medium" }]);
      expect(answer).not.toHaveProperty("todoError");
    },
  );

  // Under load the search's extra round trip was what ran out of time (the multi-process crash test: 418 looks of one
  // run lost only this read), and with it went the status that says another process's continuation is running.
  it("a sub-session search that outlasts hostTimeoutMs leaves the busy descendants out, not the status", async () => {
    host.setTodos(S, [["a", "pending"]]);
    host.statuses = { [S]: "busy", ses_elsewhere: "busy" };
    const port: HostPort = host;
    port.getChildren = (_id, signal) =>
      new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
    const gathering = watch(facts.gather(S));
    await advance(TIMEOUT_MS - 1);
    expect(gathering.settled).toBe(false);
    await advance(1);
    expect(gathering.value).toMatchObject({ status: "busy" });
    expect(gathering.value).not.toHaveProperty("busyDescendants");
  });

  it("reads the messages as inspectOptions says: text questions only when detectTextQuestions is on", async () => {
    host.addUserMessage(S, "build the thing");
    host.addAssistantMessage(S, { parts: [{ type: "text", text: "Should I use PostgreSQL or SQLite?" }] });
    const on = await facts.gather(S, inspectOptions(config, undefined));
    expect(on.messages?.textQuestion).toBe("Should I use PostgreSQL or SQLite?");
    build({ detectTextQuestions: false });
    host.addUserMessage(S, "build the thing");
    host.addAssistantMessage(S, { parts: [{ type: "text", text: "Should I use PostgreSQL or SQLite?" }] });
    const off = await facts.gather(S, inspectOptions(config, undefined));
    expect(off.messages).toBeDefined();
    expect(off.messages?.textQuestion).toBeUndefined();
  });
});

describe("the sub-session tree", () => {
  it("is not searched while no other session is busy: OpenCode lists only sessions that are not idle", async () => {
    host.children.set(S, ["ses_child"]);
    const asked = countChildReads();
    const quiet: Array<Record<string, SessionStatus>> = [{}, { [S]: "busy" }, { ses_child: "idle" }];
    for (const statuses of quiet) {
      host.statuses = statuses;
      expect(await facts.gather(S)).toMatchObject({ busyDescendants: [] });
    }
    expect(asked).toEqual([]);
  });

  it("is searched once some other session is busy or retrying, and finds the busy ones at any depth", async () => {
    host.children.set(S, ["ses_a", "ses_b"]);
    host.children.set("ses_a", ["ses_a1"]);
    host.children.set("ses_a1", ["ses_a1x"]);
    host.statuses = { ses_b: "retry", ses_a1x: "busy", ses_unrelated: "busy" };
    const asked = countChildReads();
    const answer = await facts.gather(S);
    expect(answer.busyDescendants).toEqual(["ses_b", "ses_a1x"]);
    expect(answer.status).toBe("idle");
    expect(asked).toEqual([S, "ses_a", "ses_b", "ses_a1", "ses_a1x"]);
  });

  it("goes six levels deep and no deeper", async () => {
    const chain = Array.from({ length: 8 }, (_, i) => `ses_d${i + 1}`);
    [S, ...chain].forEach((id, i) => chain[i] && host.children.set(id, [chain[i]!]));
    host.statuses = { ses_d6: "busy", ses_d7: "busy" };
    const asked = countChildReads();
    expect((await facts.gather(S)).busyDescendants).toEqual(["ses_d6"]);
    expect(asked).toEqual([S, "ses_d1", "ses_d2", "ses_d3", "ses_d4", "ses_d5"]);
  });

  it.each([
    { children: 198, grandchildFound: true },
    { children: 199, grandchildFound: false },
  ])(
    "goes a level further only while fewer than 200 sessions were seen ($children children)",
    async ({ children, grandchildFound }) => {
      const kids = Array.from({ length: children }, (_, i) => `ses_k${i}`);
      host.children.set(S, kids);
      host.children.set("ses_k0", ["ses_g0"]);
      host.statuses = { ses_g0: "busy", [kids.at(-1)!]: "busy" };
      const found = (await facts.gather(S)).busyDescendants;
      // The level that reaches the limit is still looked at whole.
      expect(found).toEqual(grandchildFound ? [kids.at(-1), "ses_g0"] : [kids.at(-1)]);
    },
  );

  it("a tree that loops back on itself is walked once", async () => {
    host.children.set(S, ["ses_a"]);
    host.children.set("ses_a", [S, "ses_a"]);
    host.statuses = { ses_a: "busy" };
    const asked = countChildReads();
    expect((await facts.gather(S)).busyDescendants).toEqual(["ses_a"]);
    expect(asked).toEqual([S, "ses_a"]);
  });
});

describe("the agent list", () => {
  it("is asked once a minute: a later look within the minute reuses the answer", async () => {
    let reads = 0;
    const getAgents = host.getAgents.bind(host);
    host.getAgents = () => (reads++, getAgents());
    await facts.gather(S);
    await advance(AGENT_CACHE_MS - 1);
    host.agents = [{ name: "renamed", canWrite: true }];
    expect((await facts.gather(S)).agents).toEqual([
      { name: "build", canWrite: true },
      { name: "plan", canWrite: false },
      { name: "reader", canWrite: false },
    ]);
    expect(reads).toBe(1);
    await advance(1);
    expect((await facts.gather(S)).agents).toEqual([{ name: "renamed", canWrite: true }]);
    expect(reads).toBe(2);
  });

  it("a list that could not be read is not remembered: the next look asks again", async () => {
    let reads = 0;
    const getAgents = host.getAgents.bind(host);
    host.getAgents = () => (++reads === 1 ? Promise.reject(new Error("agents down")) : getAgents());
    expect(await facts.gather(S)).not.toHaveProperty("agents");
    expect((await facts.gather(S)).agents).toEqual(host.agents);
    expect(reads).toBe(2);
  });
});

describe("turnStarted", () => {
  it.each(["busy", "retry"] as const)(
    "a session that is %s: started, even when its messages cannot be read",
    async (status) => {
      host.statuses = { [S]: status };
      host.messagesBehaviour = "fail";
      expect(await facts.turnStarted(S, "msg_ours")).toBe(true);
    },
  );

  it("an assistant message after ours: started, even when the statuses cannot be read", async () => {
    host.addUserMessage(S, "continue", { id: "msg_ours" });
    host.addAssistantMessage(S);
    host.statusBehaviour = "fail";
    expect(await facts.turnStarted(S, "msg_ours")).toBe(true);
  });

  it.each([
    { what: "ours is the last message", arrange: () => void host.addUserMessage(S, "continue", { id: "msg_ours" }) },
    {
      what: "only an assistant message before ours",
      arrange: () => {
        host.addAssistantMessage(S);
        host.addUserMessage(S, "continue", { id: "msg_ours" });
      },
    },
    {
      what: "ours is not in the session (refused after the 204)",
      arrange: () => {
        host.addUserMessage(S, "earlier");
        host.addAssistantMessage(S);
      },
    },
  ])("an idle session where $what: not started", async ({ arrange }) => {
    arrange();
    host.statuses = { ses_other: "busy" };
    expect(await facts.turnStarted(S, "msg_ours")).toBe(false);
  });

  it.each([
    { what: "fail", statuses: "ok" as const, messages: "fail" as const },
    { what: "answer garbage", statuses: "ok" as const, messages: "garbage" as const },
    { what: "fail with the statuses", statuses: "fail" as const, messages: "fail" as const },
  ])("an idle session whose messages reads $what: no verdict (undefined)", async (c) => {
    host.addUserMessage(S, "continue", { id: "msg_ours" });
    host.statusBehaviour = c.statuses;
    host.messagesBehaviour = c.messages;
    expect(await facts.turnStarted(S, "msg_ours")).toBeUndefined();
  });

  it("is bounded by hostTimeoutMs: reads that hang give no verdict after exactly that long", async () => {
    host.statusBehaviour = "hang";
    host.messagesBehaviour = "hang";
    const asking = watch(facts.turnStarted(S, "msg_ours"));
    await advance(TIMEOUT_MS - 1);
    expect(asking.settled).toBe(false);
    await advance(1);
    expect(asking).toEqual({ settled: true, value: undefined });
  });
});

describe("inspectOptions", () => {
  it("takes text-question detection from the configuration and the message that paused the session from its row", async () => {
    expect(inspectOptions(config, undefined)).toEqual({ detectTextQuestions: true, answerOf: null });
    expect(inspectOptions(testConfig("x.db", { detectTextQuestions: false }), null)).toEqual({
      detectTextQuestions: false,
      answerOf: null,
    });
    const scope = { sessionId: S, directory: DIRECTORY };
    await store.change(changeSession(scope, Date.now(), { pausedAt: Date.now(), pauseMessageId: "msg_took_over" }));
    const row = await store.read(q.session(S));
    expect(inspectOptions(config, row)).toEqual({ detectTextQuestions: true, answerOf: "msg_took_over" });
  });

  it("the paused session's message is judged: does it answer a question the assistant asked before it?", async () => {
    host.addUserMessage(S, "build the thing");
    host.addAssistantMessage(S, { parts: [{ type: "text", text: "Do you want the tests in Rust or in Go?" }] });
    const answer = host.addUserMessage(S, "Go, please");
    const scope = { sessionId: S, directory: DIRECTORY };
    await store.change(changeSession(scope, Date.now(), { pausedAt: Date.now(), pauseMessageId: answer.id }));
    const row = await store.read(q.session(S));
    expect((await facts.gather(S, inspectOptions(config, row))).messages?.answersQuestion).toBe(true);
    expect((await facts.gather(S, inspectOptions(config, undefined))).messages?.answersQuestion).toBeUndefined();
  });
});

describe("the files the latest turn touched", () => {
  const turn = (...paths: string[]) => [
    { id: "msg_1", role: "user", parts: [{ type: "text", text: "go" }] },
    {
      id: "msg_2",
      role: "assistant",
      parts: paths.map((path) => ({
        type: "tool",
        tool: "write",
        toolStatus: "completed",
        files: [{ path, after: "as-written" }],
      })),
    },
  ];

  it("are read from disk, and only they: the disk's content beats what the tool call said", async () => {
    host.messages.set(S, turn("/p/a.ts", "/p/b.ts") as never);
    const asked: string[][] = [];
    host.hashFiles = async (paths) => {
      asked.push([...paths]);
      return { "/p/a.ts": "formatted" };
    };
    const gathered = await facts.gather(S);
    expect(asked).toEqual([["/p/a.ts", "/p/b.ts"]]);
    expect(gathered.messages?.turnFiles).toEqual({
      answers: "other",
      files: [
        { path: "/p/a.ts", after: "formatted" },
        { path: "/p/b.ts", after: "as-written" },
      ],
    });
  });

  it("a disk that does not answer within hostTimeoutMs leaves them as the tool calls said; the look goes on", async () => {
    host.messages.set(S, turn("/p/a.ts") as never);
    host.hashFiles = (_paths, signal) =>
      new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
    const gathering = watch(facts.gather(S));
    await advance(TIMEOUT_MS);
    expect(gathering.settled).toBe(true);
    expect(gathering.value?.messages?.turnFiles?.files).toEqual([{ path: "/p/a.ts", after: "as-written" }]);
  });

  it("a turn that touched no file costs no disk read", async () => {
    host.messages.set(S, turn() as never);
    let reads = 0;
    host.hashFiles = async () => (reads++, {});
    expect((await facts.gather(S)).messages?.turnFiles).toBeUndefined();
    expect(reads).toBe(0);
  });
});
