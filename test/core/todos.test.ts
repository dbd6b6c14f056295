import { describe, expect, it } from "vitest";
import {
  focusTodo,
  isOpen,
  ledgerOf,
  listRewritten,
  mergeLedger,
  normalizeTodos,
  parseLedger,
  progressSince,
  serializeLedger,
  summarize,
  type Todo,
} from "../../src/core/todos.js";

const todos = (...pairs: Array<[string, string]>): Todo[] => pairs.map(([content, status]) => ({ content, status }));

describe("todos", () => {
  it("open means not completed, cancelled, blocked or deleted", () => {
    const statuses = ["pending", "in_progress", "completed", "cancelled", "blocked", "deleted", "something_new"];
    expect(statuses.filter((status) => isOpen({ content: "x", status }))).toEqual([
      "pending",
      "in_progress",
      "something_new",
    ]);
  });

  it("summarizes completed and open counts", () => {
    expect(summarize(todos(["a", "completed"], ["b", "cancelled"], ["c", "pending"], ["d", "blocked"]))).toEqual({
      total: 4,
      completed: 1,
      open: 1,
    });
  });

  it("focuses the todo in progress, else the first open one", () => {
    expect(focusTodo(todos(["a", "pending"], ["b", "in_progress"]))?.content).toBe("b");
    expect(focusTodo(todos(["a", "completed"], ["b", "pending"]))?.content).toBe("b");
    expect(focusTodo(todos(["a", "completed"]))).toBeUndefined();
  });

  it("normalizes whatever the host returns, dropping malformed entries", () => {
    expect(normalizeTodos("nope")).toBeUndefined();
    expect(
      normalizeTodos([
        { content: "a", status: "pending", priority: "high", id: "1" },
        { content: 3 },
        null,
        { status: "x" },
      ]),
    ).toEqual([{ content: "a", status: "pending", priority: "high", id: "1" }]);
  });
});

describe("progress (docs/how-it-decides.md)", () => {
  const baseline = ledgerOf(todos(["a", "pending"], ["b", "in_progress"], ["c", "completed"]));

  // [what happened, the todos now, progress?]
  const table: Array<[string, Todo[], string | undefined]> = [
    ["nothing changed", todos(["a", "pending"], ["b", "in_progress"], ["c", "completed"]), undefined],
    ["a todo started", todos(["a", "in_progress"], ["b", "in_progress"], ["c", "completed"]), "moved_forward"],
    ["a todo completed", todos(["a", "pending"], ["b", "completed"], ["c", "completed"]), "closed_more"],
    ["a todo cancelled", todos(["a", "cancelled"], ["b", "in_progress"], ["c", "completed"]), "closed_more"],
    ["a todo blocked", todos(["a", "blocked"], ["b", "in_progress"], ["c", "completed"]), "closed_more"],
    [
      "in progress moved back to pending (churn)",
      todos(["a", "pending"], ["b", "pending"], ["c", "completed"]),
      undefined,
    ],
    ["a completed todo reopened (churn)", todos(["a", "pending"], ["b", "in_progress"], ["c", "pending"]), undefined],
    ["a completed todo removed", todos(["a", "pending"], ["b", "in_progress"]), undefined],
    [
      "a todo deleted and re-created with the same text",
      todos(["a", "pending"], ["c", "completed"], ["b", "in_progress"]),
      undefined,
    ],
    [
      "an open todo appended",
      todos(["a", "pending"], ["b", "in_progress"], ["c", "completed"], ["d", "pending"]),
      undefined,
    ],
    [
      "a new todo appended already in progress",
      todos(["a", "pending"], ["b", "in_progress"], ["c", "completed"], ["d", "in_progress"]),
      undefined,
    ],
    ["an open todo reworded", todos(["a2", "pending"], ["b", "in_progress"], ["c", "completed"]), undefined],
    [
      "a reworded todo completed (more closed)",
      todos(["a2", "completed"], ["b", "in_progress"], ["c", "completed"]),
      "closed_more",
    ],
    [
      "a new todo appended completed (more closed)",
      todos(["a", "pending"], ["b", "in_progress"], ["c", "completed"], ["d", "completed"]),
      "closed_more",
    ],
    [
      "an unknown status (ranked as open)",
      todos(["a", "waiting"], ["b", "in_progress"], ["c", "completed"]),
      undefined,
    ],
  ];

  it.each(table)("%s", (_what, now, kind) => {
    expect(progressSince(baseline, now)?.kind).toBe(kind);
  });

  it("the ledger only goes up: toggling back and forth across continuations never counts twice", () => {
    let ledger = ledgerOf(todos(["a", "pending"]));
    const seen: Array<string | undefined> = [];
    for (const status of ["in_progress", "pending", "in_progress", "pending", "completed", "pending", "completed"]) {
      const now = todos(["a", status]);
      seen.push(progressSince(ledger, now)?.kind);
      ledger = mergeLedger(ledger, now);
    }
    expect(seen).toEqual(["moved_forward", undefined, undefined, undefined, "closed_more", undefined, undefined]);
  });

  it("a list is rewritten when most of its todos are new", () => {
    expect(listRewritten(baseline, todos(["x", "pending"], ["y", "pending"], ["a", "pending"]))).toBe(true);
    expect(
      listRewritten(baseline, todos(["a", "pending"], ["b", "pending"], ["c", "completed"], ["d", "pending"])),
    ).toBe(false);
    expect(listRewritten(baseline, todos(["a", "pending"], ["x", "pending"]))).toBe(false);
    expect(listRewritten(baseline, [])).toBe(false);
    expect(listRewritten(ledgerOf([]), todos(["x", "pending"]))).toBe(false);
  });

  it("is stored as JSON; the snapshot arrays of earlier versions read as their ledger", () => {
    expect(parseLedger(serializeLedger(baseline))).toEqual(baseline);
    expect(
      parseLedger(
        JSON.stringify([
          { content: "a", status: "in_progress" },
          { content: "b", status: "completed" },
        ]),
      ),
    ).toEqual({ closedHigh: 1, ranks: { a: 1, b: 2 } });
    for (const bad of [null, "", "{", "3", '{"closedHigh":"x"}']) expect(parseLedger(bad)).toBeNull();
  });
});
