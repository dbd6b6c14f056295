// The continuation text. Todo text is quoted (JSON string syntax) so a todo can never start a line of its own and
// forge the reminder header or the id line; the id line lets the enforcer recognise its own message later.
import { focusTodo, summarize, type Todo } from "./todos.js";

export const PROMPT_HEADER = "[SYSTEM REMINDER - TODO CONTINUATION]";

const ID_LINE_PREFIX = "[todo-continuation id=";
/** How the notes of /stop-continuation and /resume-continuation begin (the text the model receives for them). */
export const COMMAND_NOTE_PREFIX = "[todo-continuation]";
/** How the one visible line of a continuation begins (the full prompt travels beside it as a synthetic part). */
export const TRANSCRIPT_LINE_PREFIX = "↻ todo-continuation:";
const MAX_LINE_TODO_CHARS = 80;
const ID_PATTERN = /\[todo-continuation id=(inj_[A-Za-z0-9_-]{6,64})\]/g;
const MAX_TODO_CHARS = 300;

export const DEFAULT_PROMPT_TEMPLATE = `${PROMPT_HEADER}

Incomplete tasks remain in your todo list. Continue working on the next pending task.

- Proceed without asking for permission for routine steps
- Mark each task complete when finished
- Do not stop until all tasks are done
- If you believe the work is already done, re-check each open todo and update the list (mark it completed or
  cancelled) instead of only saying so
- If you need a decision that only the user can make, ask once, clearly, and stop

Todos:
{{todos}}

Continue from: {{next}}

{{status}}`;

/** Placeholders a custom `prompt` template may use. */
export const PROMPT_PLACEHOLDERS = ["todos", "next", "status", "completed", "total", "remaining"] as const;

const MARKS: Record<string, string> = {
  completed: "[x]",
  in_progress: "[>]",
  cancelled: "[-]",
  blocked: "[!]",
  deleted: "[-]",
};
const LABELS: Record<string, string> = {
  in_progress: " (in progress)",
  cancelled: " (cancelled)",
  blocked: " (blocked)",
  deleted: " (deleted)",
};

export function quoteTodo(content: string): string {
  const clipped = content.length > MAX_TODO_CHARS ? `${content.slice(0, MAX_TODO_CHARS)}…` : content;
  return JSON.stringify(clipped);
}

export function statusLine(todos: readonly Todo[]): string {
  const { total, completed, open } = summarize(todos);
  return `[Status: ${completed}/${total} completed, ${open} remaining]`;
}

export function checklist(todos: readonly Todo[]): string {
  return todos.map((t) => `- ${MARKS[t.status] ?? "[ ]"} ${quoteTodo(t.content)}${LABELS[t.status] ?? ""}`).join("\n");
}

export function idLine(injectionId: string): string {
  return `${ID_LINE_PREFIX}${injectionId}]`;
}

/**
 * The id the text's LAST id line names: ours is always the prompt's last line, and a todo quoted above it may hold an
 * id line of its own (a model writing todos about this very tool), which must not pass for ours.
 */
export function findInjectionId(text: string): string | undefined {
  if (!text.includes(ID_LINE_PREFIX)) return undefined;
  let last: string | undefined;
  for (const match of text.matchAll(ID_PATTERN)) last = match[1];
  return last;
}

/**
 * The one line a person sees in the transcript for a continuation: `↻ todo-continuation: 1/3 done, continuing with
 * "write the tests"`. The checklist is in the prompt itself, which the model receives and the TUI does not draw.
 */
export function transcriptLine(todos: readonly Todo[]): string {
  const { total, completed } = summarize(todos);
  const next = focusTodo(todos);
  const clipped =
    next && next.content.length > MAX_LINE_TODO_CHARS
      ? `${next.content.slice(0, MAX_LINE_TODO_CHARS)}…`
      : next?.content;
  return `${TRANSCRIPT_LINE_PREFIX} ${completed}/${total} done${clipped ? `, continuing with ${JSON.stringify(clipped)}` : ""}`;
}

/**
 * `note`: why the session was woken from a park (core/wake-note.ts), said right after the header, where a custom
 * template cannot leave it out.
 */
export function renderPrompt(
  todos: readonly Todo[],
  injectionId: string,
  template: string = DEFAULT_PROMPT_TEMPLATE,
  note?: string,
): string {
  const { total, completed, open } = summarize(todos);
  const next = focusTodo(todos);
  const values: Record<(typeof PROMPT_PLACEHOLDERS)[number], string> = {
    todos: checklist(todos),
    next: next ? quoteTodo(next.content) : "(none)",
    status: statusLine(todos),
    completed: String(completed),
    total: String(total),
    remaining: String(open),
  };
  let body = template.replace(/\{\{\s*(\w+)\s*\}\}/g, (whole, name: string) =>
    name in values ? values[name as keyof typeof values] : whole,
  );
  // A custom template cannot drop the parts the enforcer and the model rely on.
  if (!body.startsWith(PROMPT_HEADER)) body = `${PROMPT_HEADER}\n\n${body}`;
  if (!body.includes(values.status)) body = `${body}\n\n${values.status}`;
  if (note) body = `${PROMPT_HEADER}\n\n${note}${body.slice(PROMPT_HEADER.length)}`;
  return `${body}\n${idLine(injectionId)}`;
}
