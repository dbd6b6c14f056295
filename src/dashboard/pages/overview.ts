// The overview: every session, newest activity first, each with its state in words and colour, its project, title,
// todos, continuations and what they cost, and its last decision in the toast's words; the filters; the day's totals.
import { money } from "../../core/words.js";
import {
  OVERVIEW_FILTERS,
  type DayTotals,
  type OverviewFilter,
  type OverviewRow,
} from "../../store/operator/overview.js";
import { html, type Markup } from "../html.js";
import { decisionWords, sessionState, todoWords } from "../session-state.js";
import { ago, projectName } from "./layout.js";

export interface OverviewModel {
  rows: OverviewRow[];
  totals: DayTotals;
  /** The daily cost cap (dailyContinuationCost) of the configuration this process reads; 0 for none. */
  dailyCap: number;
  projects: Array<{ directory: string; sessions: number }>;
  filter: OverviewFilter;
  directory?: string;
  search?: string;
  limit: number;
  now: number;
  base: string;
}

const FILTER_WORDS: Record<OverviewFilter, string> = {
  all: "All",
  needs: "Needs you",
  running: "Running",
  stopped: "Stopped",
};

function filterLink(model: OverviewModel, filter: OverviewFilter): Markup {
  const query = new URLSearchParams();
  if (filter !== "all") query.set("filter", filter);
  if (model.directory) query.set("project", model.directory);
  if (model.search) query.set("q", model.search);
  const href = `${model.base}/${query.size > 0 ? `?${query}` : ""}`;
  return html`<a href="${href}" class="${filter === model.filter ? "on" : ""}">${FILTER_WORDS[filter]}</a>`;
}

function filters(model: OverviewModel): Markup {
  const options = model.projects.map(
    (p) =>
      html`<option value="${p.directory}" ${p.directory === model.directory ? html`selected` : ""}>
        ${projectName(p.directory)} (${p.sessions})
      </option>`,
  );
  return html`<nav class="filters">
    ${OVERVIEW_FILTERS.map((f) => filterLink(model, f))}
    <form method="get" action="${model.base}/">
      ${model.filter === "all" ? "" : html`<input type="hidden" name="filter" value="${model.filter}" />`}
      <select name="project" aria-label="project">
        <option value="">every project</option>
        ${options}
      </select>
      <input
        type="search"
        name="q"
        value="${model.search ?? ""}"
        placeholder="session id or title"
        aria-label="search"
      />
      <button type="submit">Show</button>
    </form>
  </nav>`;
}

function totals(model: OverviewModel): Markup {
  const { totals: t, dailyCap } = model;
  const cap = dailyCap > 0 ? html` of <b>${money(dailyCap)}</b> a day` : "";
  return html`<div class="totals" id="totals">
    <span>today: <b>${t.continuations}</b> continuations, <b>${money(t.cost)}</b>${cap}</span
    ><span>notices: <b>${t.noticesPending}</b> pending, <b>${t.noticesFailed}</b> failed</span>
  </div>`;
}

export function stateBadge(row: OverviewRow): Markup {
  const state = sessionState(row);
  const until = state.until === undefined ? "" : html` <span data-until="${state.until}"></span>`;
  return html`<span class="state ${state.state}" data-state="${state.state}">${state.label}${until}</span>`;
}

function sessionLine(row: OverviewRow, model: OverviewModel): Markup {
  const state = sessionState(row);
  const todos = todoWords(row, state.state);
  const said = decisionWords(row.last);
  // The reason that holds it, where the last decision does not already say it.
  const why = state.why && state.why.text !== said ? html`<div class="why">${state.why.text}</div>` : "";
  return html`<div class="session" data-session="${row.sessionId}">
    <div class="badge">${stateBadge(row)}</div>
    <div class="title">
      <a href="${model.base}/session/${encodeURIComponent(row.sessionId)}">${row.title ?? row.sessionId}</a>
      <div class="id">${row.sessionId}</div>
    </div>
    <div class="project" title="${row.directory}">
      ${projectName(row.directory)}${row.server ? html`<div class="muted">${row.server}</div>` : ""}
    </div>
    <div class="numbers">
      ${todos}
      <div class="muted">${row.continuations} continued · ${money(row.cost)}</div>
    </div>
    <div class="last">
      ${said}${why}
      <div class="muted">${ago(row.last?.at ?? row.updatedAt, model.now)}</div>
    </div>
  </div>`;
}

export function overviewContent(model: OverviewModel): Markup {
  const list =
    model.rows.length === 0
      ? html`<div class="empty">No session here yet.</div>`
      : model.rows.map((row) => sessionLine(row, model));
  const more =
    model.rows.length >= model.limit
      ? html`<p class="muted">The newest ${model.limit} are shown: search or filter for others.</p>`
      : "";
  return html`${filters(model)}${totals(model)}
    <div class="sessions">${list}</div>
    ${more}`;
}
