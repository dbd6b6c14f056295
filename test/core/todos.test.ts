import { describe, expect, it } from "vitest";
import { focusTodo, isOpen, normalizeTodos, snapshotOf, statusProgressed, summarize } from "../../src/core/todos.js";

describe("todos", () => {
  it("open means not completed, cancelled, blocked or deleted", () => {
    const statuses = ["pending", "in_progress", "completed", "cancelled", "blocked", "deleted", "something_new"];
    expect(statuses.filter((status) => isOpen({ content: "x", status }))).toEqual(["pending", "in_progress", "something_new"]);
  });

  it("summarizes completed and open counts", () => {
    const todos = [
      { content: "a", status: "completed" },
      { content: "b", status: "cancelled" },
      { content: "c", status: "pending" },
      { content: "d", status: "blocked" },
    ];
    expect(summarize(todos)).toEqual({ total: 4, completed: 1, open: 1 });
  });

  it("focuses the todo in progress, else the first open one", () => {
    expect(focusTodo([{ content: "a", status: "pending" }, { content: "b", status: "in_progress" }])?.content).toBe("b");
    expect(focusTodo([{ content: "a", status: "completed" }, { content: "b", status: "pending" }])?.content).toBe("b");
    expect(focusTodo([{ content: "a", status: "completed" }])).toBeUndefined();
  });

  it("progress is a status change, not new or reworded open todos", () => {
    const before = snapshotOf([{ content: "a", status: "pending" }, { content: "b", status: "pending" }]);
    expect(statusProgressed(before, [{ content: "a", status: "in_progress" }, { content: "b", status: "pending" }])).toBe(true);
    expect(statusProgressed(before, [{ content: "a", status: "pending" }, { content: "b", status: "completed" }])).toBe(true);
    expect(statusProgressed(before, [{ content: "a", status: "pending" }, { content: "b", status: "pending" }])).toBe(false);
    expect(
      statusProgressed(before, [{ content: "a", status: "pending" }, { content: "b", status: "pending" }, { content: "c", status: "pending" }]),
    ).toBe(false);
    expect(statusProgressed(before, [{ content: "a2", status: "pending" }, { content: "b", status: "pending" }])).toBe(false);
    // Removing a completed todo changes the closed count.
    const withDone = snapshotOf([{ content: "a", status: "completed" }, { content: "b", status: "pending" }]);
    expect(statusProgressed(withDone, [{ content: "b", status: "pending" }])).toBe(true);
  });

  it("normalizes whatever the host returns, dropping malformed entries", () => {
    expect(normalizeTodos("nope")).toBeUndefined();
    expect(normalizeTodos([{ content: "a", status: "pending", priority: "high", id: "1" }, { content: 3 }, null, { status: "x" }])).toEqual([
      { content: "a", status: "pending", priority: "high", id: "1" },
    ]);
  });
});
