// Todos as OpenCode reports them, and the two facts the guards need: what is open, and whether statuses moved.

export interface Todo {
  content: string;
  status: string;
  priority?: string;
  id?: string;
}

/** A todo whose status is one of these needs no more work from the agent. */
const CLOSED_STATUSES: ReadonlySet<string> = new Set(["completed", "cancelled", "blocked", "deleted"]);

export function isOpen(todo: Todo): boolean {
  return !CLOSED_STATUSES.has(todo.status);
}

export interface TodoSummary {
  total: number;
  completed: number;
  open: number;
}

export function summarize(todos: readonly Todo[]): TodoSummary {
  let completed = 0;
  let open = 0;
  for (const todo of todos) {
    if (todo.status === "completed") completed++;
    if (isOpen(todo)) open++;
  }
  return { total: todos.length, completed, open };
}

/** The todo the agent should continue from: the one in progress, else the first open one. */
export function focusTodo(todos: readonly Todo[]): Todo | undefined {
  return todos.find((t) => t.status === "in_progress") ?? todos.find(isOpen);
}

export type TodoSnapshot = ReadonlyArray<{ content: string; status: string }>;

export function snapshotOf(todos: readonly Todo[]): TodoSnapshot {
  return todos.map((t) => ({ content: t.content, status: t.status }));
}

/**
 * Progress is a change of status, never activity: a todo present before and after whose status differs, or a
 * different number of closed todos. Adding or rewording open todos alone is not progress, so a model cannot
 * escape the stagnation limit by appending items.
 */
export function statusProgressed(before: TodoSnapshot, after: readonly Todo[]): boolean {
  const closed = (list: ReadonlyArray<{ status: string }>) => list.filter((t) => CLOSED_STATUSES.has(t.status)).length;
  if (closed(before) !== closed(after)) return true;
  const statusBefore = new Map<string, string>();
  for (const t of before) statusBefore.set(t.content, t.status);
  for (const t of after) {
    const previous = statusBefore.get(t.content);
    if (previous !== undefined && previous !== t.status) return true;
  }
  return false;
}

/** Accepts whatever OpenCode or a user-facing API hands over and keeps only well-formed todos. */
export function normalizeTodos(raw: unknown): Todo[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  const todos: Todo[] = [];
  for (const item of raw) {
    if (!item || typeof item !== "object") continue;
    const { content, status, priority, id } = item as Record<string, unknown>;
    if (typeof content !== "string" || typeof status !== "string") continue;
    const todo: Todo = { content, status };
    if (typeof priority === "string") todo.priority = priority;
    if (typeof id === "string") todo.id = id;
    todos.push(todo);
  }
  return todos;
}
