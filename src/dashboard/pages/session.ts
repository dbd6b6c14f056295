// A session's page: how it stands and the actions a person has on it (stop, resume, allow more, wake), its
// continuations with their bills, its decisions as a timeline in the toast's words with their details, its checks and
// its notices with their deliveries.
import { explain } from "../../core/explain.js";
import { money } from "../../core/words.js";
import type { OverviewRow } from "../../store/operator/overview.js";
import type { AuditRow, CheckRunRow } from "../../store/operator/queries.js";
import type { ContinuationRow, NoticeRow } from "../../store/operator/session-page.js";
import { parseDetail } from "../../store/operator/queries.js";
import { html, type Fragment, type Markup } from "../html.js";
import { sessionState, todoWords } from "../session-state.js";
import { ago, projectName } from "./layout.js";
import { stateBadge } from "./overview.js";

export const ACTIONS = ["stop", "resume", "allow", "wake"] as const;
export type Action = (typeof ACTIONS)[number];

export interface SessionModel {
  row: OverviewRow;
  timeline: AuditRow[];
  continuations: ContinuationRow[];
  notices: NoticeRow[];
  checks: CheckRunRow[];
  todos: Array<{ content: string; reached: string }>;
  formToken: string;
  /** What the last action did, from a fixed set of words (never text the request carried). */
  flash?: { text: string; refused: boolean };
  now: number;
  base: string;
}

const ACTION_WORDS: Record<Action, string> = {
  stop: "Stop",
  resume: "Resume",
  allow: "Allow more",
  wake: "Wake now",
};

/** The actions that mean something for the session as it stands. */
function actionsFor(row: OverviewRow): Action[] {
  const state = sessionState(row);
  const actions: Action[] = [];
  if (state.state !== "stopped") actions.push("stop");
  if (state.state === "stopped" || state.state === "needs") actions.push("resume");
  if (state.state === "needs" || row.continuations > 0) actions.push("allow");
  if (row.park) actions.push("wake");
  return actions;
}

function actionForms(model: SessionModel): Markup {
  const path = `${model.base}/session/${encodeURIComponent(model.row.sessionId)}`;
  return html`<div class="actions">
    ${actionsFor(model.row).map(
      (action) =>
        html`<form method="post" action="${path}/${action}">
          <input type="hidden" name="csrf" value="${model.formToken}" />
          <button type="submit" class="act ${action}" data-action="${action}">${ACTION_WORDS[action]}</button>
        </form>`,
    )}
  </div>`;
}

function cell(label: string, content: Fragment): Markup {
  return html`<td data-label="${label}">${content}</td>`;
}

function table(headers: string[], rows: Markup[], empty: string): Markup {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<table>
    <thead>
      <tr>
        ${headers.map((h) => html`<th>${h}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}

function continuations(model: SessionModel): Markup {
  const rows = model.continuations.map(
    (c) =>
      html`<tr>
        ${cell("when", ago(c.created_at, model.now))}${cell("sent", c.status)}${cell(
          "todos",
          `${c.todos_open} of ${c.todos_total} open`,
        )}${cell("turn", c.outcome ?? "not billed yet")}${cell("cost", c.cost === null ? "" : money(c.cost))}${cell(
          "tokens",
          c.tokens ?? "",
        )}${cell("agent · model", [c.agent, c.model].filter(Boolean).join(" · "))}${cell("error", c.error ?? "")}
      </tr>`,
  );
  const headers = ["when", "sent", "todos", "turn", "cost", "tokens", "agent · model", "error"];
  return html`<section>
    <h2>Continuations</h2>
    ${table(headers, rows, "None yet.")}
  </section>`;
}

function detailOf(row: AuditRow): Fragment {
  const detail = parseDetail(row.detail);
  return Object.keys(detail).length === 0 ? "" : html`<pre>${JSON.stringify(detail, null, 2)}</pre>`;
}

function timeline(model: SessionModel): Markup {
  const rows = [...model.timeline].reverse().map((row) => {
    const words = explain(row.event, row.reason, parseDetail(row.detail));
    return html`<tr data-event="${row.event}">
      ${cell("when", ago(row.at, model.now))}${cell(
        "decision",
        [row.event, row.reason].filter(Boolean).join(": "),
      )}${cell("in words", html`${words?.text ?? ""}${detailOf(row)}`)}
    </tr>`;
  });
  return html`<section>
    <h2>Decisions</h2>
    ${table(["when", "decision", "in words"], rows, "None yet.")}
  </section>`;
}

function checks(model: SessionModel): Markup {
  if (model.checks.length === 0) return html``;
  const rows = [...model.checks].reverse().map(
    (c) =>
      html`<tr>
        ${cell("when", ago(c.started_at, model.now))}${cell("command", c.command)}${cell(
          "result",
          [c.state, c.exit_code === null ? "" : `exit ${c.exit_code}`].filter(Boolean).join(", "),
        )}${cell("last line", c.output_tail?.trim().split("\n").at(-1) ?? "")}
      </tr>`,
  );
  return html`<section>
    <h2>Checks</h2>
    ${table(["when", "command", "result", "last line"], rows, "")}
  </section>`;
}

function todoList(model: SessionModel): Markup {
  if (model.todos.length === 0) return html``;
  return html`<section>
    <h2>Todos, as far as each got since the last message</h2>
    <ul class="todos">
      ${model.todos.map((t) => html`<li data-reached="${t.reached}">${t.content} <span class="muted">${t.reached}</span></li>`)}
    </ul>
  </section>`;
}

function notices(model: SessionModel): Markup {
  const rows = model.notices.map(
    (n) =>
      html`<tr>
        ${cell("when", ago(n.created_at, model.now))}${cell("kind", `${n.kind} (${n.reason})`)}${cell(
          "channel",
          n.channel,
        )}${cell("delivery", `${n.state}${n.attempts > 1 ? `, ${n.attempts} tries` : ""}`)}${cell("error", n.last_error ?? "")}
      </tr>`,
  );
  return html`<section>
    <h2>Notices</h2>
    ${table(["when", "kind", "channel", "delivery", "error"], rows, "None sent.")}
  </section>`;
}

export function sessionContent(model: SessionModel): Markup {
  const { row } = model;
  const state = sessionState(row);
  const todos = todoWords(row, state.state);
  const flash = model.flash
    ? html`<div class="flash ${model.flash.refused ? "refused" : ""}" role="status">${model.flash.text}</div>`
    : "";
  return html`${flash}
    <section>
      <h2 class="title">${row.title ?? row.sessionId}</h2>
      <div class="muted">
        ${row.sessionId} ·
        <span title="${row.directory}">${projectName(row.directory)}</span>${row.server ? ` · ${row.server}` : ""}
      </div>
      <p>${stateBadge(row)} ${state.why ? html`<span class="why">${state.why.text}</span>` : ""}</p>
      <p>${todos} · ${row.continuations} continued since the last message · ${money(row.cost)}</p>
      ${actionForms(model)}
    </section>
    ${todoList(model)}${continuations(model)}${checks(model)}${timeline(model)}${notices(model)}`;
}
