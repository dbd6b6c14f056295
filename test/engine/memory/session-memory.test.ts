// SessionMemories promises: one memory per session, created on first use and kept until deleted or evicted; once the
// map reaches its cap, a new session evicts the oldest tenth of the cap, never a session the `pinned` predicate says
// has live work (those may hold the map above the cap), and eviction runs again only after another tenth has been
// added.
import { describe, expect, it } from "vitest";
import { SessionMemories, SessionMemory } from "../../../src/engine/memory/session-memory.js";
import type { Todo } from "../../../src/core/todos.js";

const ids = (n: number, prefix = "s") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** Everything a memory shows, as a plain object. */
const fields = (m: SessionMemory) => ({
  status: m.status,
  abortedAt: m.abortedAt,
  parentId: m.parentId,
  todos: m.todos,
  todoReadFailures: m.todoReadFailures,
  openRequestIds: m.openRequestIds,
  compactedRecently: m.compactedRecently,
  activity: m.activity,
  turnSignals: m.turnSignals,
});
const FRESH = {
  status: undefined,
  abortedAt: undefined,
  parentId: undefined,
  todos: undefined,
  todoReadFailures: 0,
  openRequestIds: [],
  compactedRecently: false,
  activity: 0,
  turnSignals: 0,
};
const todo = (status: Todo["status"]): Todo => ({ id: status, content: status, status, priority: "medium" });

describe("SessionMemory: each field changes only by what was seen", () => {
  it.each([
    { seen: "a status", act: (m: SessionMemory) => m.sawStatus("busy"), changed: { status: "busy" } },
    { seen: "activity", act: (m: SessionMemory) => m.sawActivity(), changed: { activity: 1 } },
    {
      seen: "a sign of a turn",
      act: (m: SessionMemory) => m.sawTurnSignal(),
      changed: { activity: 1, turnSignals: 1 },
    },
    { seen: "a compaction", act: (m: SessionMemory) => m.sawCompaction(), changed: { compactedRecently: true } },
    { seen: "an abort", act: (m: SessionMemory) => m.sawAbort(5), changed: { abortedAt: 5 } },
    { seen: "a parent", act: (m: SessionMemory) => m.sawParent("ses_p"), changed: { parentId: "ses_p" } },
    { seen: "a question", act: (m: SessionMemory) => m.sawRequest("q1", true), changed: { openRequestIds: ["q1"] } },
    { seen: "failed todo reads", act: (m: SessionMemory) => m.failedTodoReads(2), changed: { todoReadFailures: 2 } },
  ])("$seen changes only what it names", ({ act, changed }) => {
    const memory = new SessionMemory();
    act(memory);
    expect(fields(memory)).toEqual({ ...FRESH, ...changed });
  });

  it("a person writing is activity, and ends what a compaction or an abort held back", () => {
    const memory = new SessionMemory();
    memory.sawCompaction();
    memory.sawAbort(5);
    memory.sawPersonWrite();
    expect(fields(memory)).toEqual({ ...FRESH, activity: 1, abortedAt: null });
  });

  it("todos from OpenCode end a run of failed reads; todos from an event do not", () => {
    const memory = new SessionMemory();
    const list = [todo("pending")];
    memory.failedTodoReads(2);
    memory.sawTodos(list);
    expect(memory.todoReadFailures).toBe(2);
    memory.readTodos(list);
    expect(fields(memory)).toEqual({ ...FRESH, todos: list });
  });

  it("the database's abort is learned only while memory does not know one, and output lifts it", () => {
    const memory = new SessionMemory();
    memory.learnAbort(7);
    memory.learnAbort(9);
    expect(memory.abortedAt).toBe(7);
    memory.abortLifted();
    memory.learnAbort(9);
    expect(memory.abortedAt).toBeNull();
  });

  it("a title seen again is no news", () => {
    const memory = new SessionMemory();
    expect(memory.sawTitle("Fix the parser")).toBe(true);
    expect(memory.sawTitle("Fix the parser")).toBe(false);
    expect(memory.sawTitle("Fix the parser and its tests")).toBe(true);
  });

  it("a parent seen again is no news", () => {
    const memory = new SessionMemory();
    expect(memory.sawParent("ses_p")).toBe(true);
    expect(memory.sawParent("ses_p")).toBe(false);
    expect(memory.sawParent(null)).toBe(true);
  });

  it("a request replied is no longer open; forgetting the live state drops the status and the requests", () => {
    const memory = new SessionMemory();
    memory.sawRequest("q1", true);
    memory.sawRequest("q2", true);
    memory.sawRequest("q1", false);
    expect(memory.openRequestIds).toEqual(["q2"]);
    memory.sawStatus("busy");
    memory.sawActivity();
    memory.forgetLiveState();
    expect(fields(memory)).toEqual({ ...FRESH, activity: 1 });
  });

  it("an idle while injecting is owed once: asking clears it", () => {
    const memory = new SessionMemory();
    expect(memory.takeIdleWhileInjecting()).toBe(false);
    memory.idleWhileInjecting();
    expect(memory.takeIdleWhileInjecting()).toBe(true);
    expect(memory.takeIdleWhileInjecting()).toBe(false);
  });
});

describe("SessionMemories", () => {
  it("creates a fresh memory on first use and returns the same one afterwards", () => {
    const memories = new SessionMemories(10, () => false);
    expect(memories.peek("a")).toBeUndefined();
    expect(memories.size).toBe(0);
    const a = memories.get("a");
    expect(fields(a)).toEqual(FRESH);
    a.sawActivity();
    expect(memories.get("a")).toBe(a);
    expect(memories.peek("a")).toBe(a);
    expect(memories.size).toBe(1);
  });

  it("gives every session its own memory, and forgets one on delete", () => {
    const memories = new SessionMemories(10, () => false);
    const a = memories.get("a");
    const b = memories.get("b");
    expect(a).not.toBe(b);
    a.sawRequest("que_1", true);
    expect(b.openRequests).toBe(0);
    expect(memories.ids()).toEqual(["a", "b"]);
    memories.delete("a");
    expect(memories.peek("a")).toBeUndefined();
    expect(memories.ids()).toEqual(["b"]);
    expect(memories.get("a").activity).toBe(0);
  });

  it("peek() never creates a memory, so it cannot trigger an eviction", () => {
    const memories = new SessionMemories(2, () => false);
    memories.get("a");
    memories.get("b");
    expect(memories.peek("c")).toBeUndefined();
    expect(memories.ids()).toEqual(["a", "b"]);
  });

  it("at the cap, a new session evicts the oldest one; using a known session evicts nothing", () => {
    const memories = new SessionMemories(10, () => false);
    for (const id of ids(10)) memories.get(id);
    memories.get("s5").sawActivity();
    expect(memories.size).toBe(10);
    memories.get("new0");
    expect(memories.size).toBe(10);
    expect(memories.peek("s0")).toBeUndefined();
    expect(memories.ids()).toEqual([...ids(10).slice(1), "new0"]);
    memories.get("new1");
    expect(memories.peek("s1")).toBeUndefined();
    expect(memories.peek("s5")?.activity).toBe(1);
  });

  it("evicts a tenth of the cap in one pass, and not again until another tenth has been added", () => {
    const memories = new SessionMemories(100, () => false);
    for (const id of ids(100)) memories.get(id);
    memories.get("new0");
    expect(memories.size).toBe(91);
    expect(ids(10).some((id) => memories.peek(id))).toBe(false);
    expect(memories.peek("s10")).toBeDefined();
    for (const id of ids(9, "more")) memories.get(id);
    expect(memories.size).toBe(100);
    memories.get("next");
    expect(memories.size).toBe(91);
    expect(memories.peek("s19")).toBeUndefined();
    expect(memories.peek("s20")).toBeDefined();
  });

  it("never evicts a pinned session, however many new ones come", () => {
    const pinned = new Set(["s0", "s3", "s7"]);
    const memories = new SessionMemories(10, (id) => pinned.has(id));
    for (const id of ids(10)) memories.get(id);
    for (let i = 0; i < 4; i++) memories.get("s3").sawTurnSignal();
    for (const id of ids(200, "new")) memories.get(id);
    for (const id of pinned) expect(memories.peek(id)).toBeDefined();
    expect(memories.peek("s3")?.turnSignals).toBe(4);
    expect(memories.peek("s1")).toBeUndefined();
    expect(memories.size).toBeLessThanOrEqual(10);
  });

  it("shrinks back below the cap once the sessions that held it above are unpinned", () => {
    const pinned = new Set(ids(50));
    const memories = new SessionMemories(10, (id) => pinned.has(id));
    for (const id of ids(50)) memories.get(id);
    expect(memories.size).toBe(50);
    pinned.clear();
    for (const id of ids(200, "new")) memories.get(id);
    expect(memories.size).toBeLessThanOrEqual(10);
  });

  it("lets pinned sessions hold the map above the cap rather than lose one", () => {
    const memories = new SessionMemories(10, () => true);
    for (const id of ids(30)) memories.get(id);
    expect(memories.size).toBe(30);
    expect(memories.ids()).toEqual(ids(30));
  });

  it("asks `pinned` at eviction time: a session whose work ended can be evicted", () => {
    const pinned = new Set(["s0"]);
    const memories = new SessionMemories(10, (id) => pinned.has(id));
    for (const id of ids(10)) memories.get(id);
    memories.get("new0");
    expect(memories.peek("s0")).toBeDefined();
    expect(memories.peek("s1")).toBeUndefined();
    pinned.clear();
    memories.get("new1");
    expect(memories.peek("s0")).toBeUndefined();
    expect(memories.peek("s2")).toBeDefined();
  });

  it("an evicted session comes back with a fresh memory", () => {
    const memories = new SessionMemories(1, () => false);
    const first = memories.get("a");
    first.sawActivity();
    memories.get("b");
    expect(memories.peek("a")).toBeUndefined();
    expect(memories.get("a")).not.toBe(first);
    expect(memories.peek("a")?.activity).toBe(0);
  });

  // With thousands of sessions pinned by armed countdowns, a pass that walks the whole map on every new session would
  // make each event O(n). Every pass starts at the oldest session, so the calls for it count the passes.
  it("with everything pinned, walks the map once per tenth of its size added, not once per session", () => {
    let passes = 0;
    const memories = new SessionMemories(100, (id) => {
      if (id === "s0") passes++;
      return true;
    });
    for (const id of ids(200)) memories.get(id);
    // Passes at sizes 100, 110, 121, 133, 146, 160, 176, 193: rarer as the map grows.
    expect(passes).toBe(8);
    expect(memories.size).toBe(200);
  });
});
