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

/** How far a todo has come: open (0), being worked on (1), closed (2). */
function rank(status: string): number {
  if (CLOSED_STATUSES.has(status)) return 2;
  return status === "in_progress" ? 1 : 0;
}

/**
 * The baseline progress is measured against: the highest rank each todo (by its text) has ever reached, and the
 * most todos ever closed at once. Kept since the last real user message, across continuations.
 */
export interface ProgressLedger {
  closedHigh: number;
  ranks: Readonly<Record<string, number>>;
}

export function ledgerOf(todos: ReadonlyArray<{ content: string; status: string }>): ProgressLedger {
  return mergeLedger({ closedHigh: 0, ranks: {} }, todos);
}

/** The ledger after these todos were seen: every rank and the closed count only ever go up. */
export function mergeLedger(
  ledger: ProgressLedger,
  todos: ReadonlyArray<{ content: string; status: string }>,
): ProgressLedger {
  const ranks: Record<string, number> = { ...ledger.ranks };
  let closed = 0;
  for (const todo of todos) {
    const r = rank(todo.status);
    if (r === 2) closed++;
    ranks[todo.content] = Math.max(ranks[todo.content] ?? 0, r);
  }
  return { closedHigh: Math.max(ledger.closedHigh, closed), ranks };
}

export type ProgressKind = "closed_more" | "moved_forward";

/**
 * Progress is more todos closed than ever before, or a known todo moved forward to a status it never had
 * (open → in progress → closed). Never activity, and never churn: a todo moved back and forth, re-created with the
 * same text, or new open todos appended do not count.
 */
export function progressSince(
  ledger: ProgressLedger,
  todos: readonly Todo[],
): { kind: ProgressKind; todo?: string } | undefined {
  let closed = 0;
  for (const todo of todos) if (rank(todo.status) === 2) closed++;
  if (closed > ledger.closedHigh) return { kind: "closed_more" };
  for (const todo of todos) {
    const before = ledger.ranks[todo.content];
    if (before !== undefined && rank(todo.status) > before) return { kind: "moved_forward", todo: todo.content };
  }
  return undefined;
}

/** The list was rewritten: most of its todos are new (a new plan, not an item appended to the old one). */
export function listRewritten(ledger: ProgressLedger, todos: readonly Todo[]): boolean {
  if (todos.length === 0 || Object.keys(ledger.ranks).length === 0) return false;
  const known = todos.filter((t) => ledger.ranks[t.content] !== undefined).length;
  return known * 2 < todos.length;
}

/** A stored ledger (JSON); the array of `{content,status}` written by earlier versions is read as its ledger. */
export function parseLedger(text: string | null | undefined): ProgressLedger | null {
  if (!text) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed)) return ledgerOf(normalizeTodos(parsed) ?? []);
    if (parsed && typeof parsed === "object") {
      const { closedHigh, ranks } = parsed as Record<string, unknown>;
      if (typeof closedHigh !== "number" || !ranks || typeof ranks !== "object") return null;
      const clean: Record<string, number> = {};
      for (const [content, r] of Object.entries(ranks as Record<string, unknown>))
        if (typeof r === "number") clean[content] = r;
      return { closedHigh, ranks: clean };
    }
    return null;
  } catch {
    return null;
  }
}

export function serializeLedger(ledger: ProgressLedger): string {
  return JSON.stringify(ledger);
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
