// The page's pictures: continuations and spend per hour over the last day and per day over the last month, the
// sessions stopped by each reason over the same windows, and in a fleet the servers and the replica that follows each.
// Drawn on the server as SVG (no chart library, no script): bars that scale with the width of the screen.
import { money } from "../../core/words.js";
import type { ServerState } from "../../store/operator/roster.js";
import type { Series } from "../../store/operator/charts.js";
import { html, type Markup } from "../html.js";
import { ago } from "./layout.js";

export interface ChartsModel {
  day: Series;
  month: Series;
  stopsDay: Array<{ reason: string; sessions: number }>;
  stopsMonth: Array<{ reason: string; sessions: number }>;
  /** The fleet's servers; undefined where the database serves no fleet. */
  servers?: ServerState[];
  now: number;
}

const W = 600;
const H = 140;

function label(start: number, index: number, bucketMs: number): string {
  const at = new Date(start + index * bucketMs);
  return bucketMs < 86_400_000
    ? `${String(at.getHours()).padStart(2, "0")}:00`
    : `${at.getMonth() + 1}/${at.getDate()}`;
}

/** Bars of `values`, one a bucket, each with its time and value in its tooltip; the highest labelled. */
function bars(title: string, values: number[], series: Series, format: (v: number) => string): Markup {
  const max = Math.max(...values, 0);
  const step = W / values.length;
  const rects = values.map((value, i) => {
    const h = max > 0 ? Math.max(value > 0 ? 2 : 0, (value / max) * (H - 20)) : 0;
    return html`<rect
      x="${(i * step + 1).toFixed(1)}"
      y="${(H - h).toFixed(1)}"
      width="${Math.max(1, step - 2).toFixed(1)}"
      height="${h.toFixed(1)}"
      ><title>${label(series.start, i, series.bucketMs)}: ${format(value)}</title></rect
    >`;
  });
  const first = label(series.start, 0, series.bucketMs);
  const last = label(series.start, values.length - 1, series.bucketMs);
  return html`<figure class="chart">
    <figcaption>${title} <span class="muted">(highest ${format(max)})</span></figcaption>
    <svg viewBox="0 0 ${W} ${H}" preserveAspectRatio="none" role="img" aria-label="${title}">${rects}</svg>
    <div class="axis muted"><span>${first}</span><span>${last}</span></div>
  </figure>`;
}

function stops(title: string, rows: Array<{ reason: string; sessions: number }>): Markup {
  if (rows.length === 0)
    return html`<figure class="chart">
      <figcaption>${title}</figcaption>
      <p class="muted">None.</p>
    </figure>`;
  const max = Math.max(...rows.map((r) => r.sessions));
  return html`<figure class="chart">
    <figcaption>${title}</figcaption>
    ${rows.map(
      (r) =>
        html`<div class="hbar">
          <span class="reason">${r.reason}</span><meter min="0" max="${max}" value="${r.sessions}"></meter
          ><b>${r.sessions}</b>
        </div>`,
    )}
  </figure>`;
}

function servers(model: ChartsModel): Markup {
  // A database that could serve a fleet but serves none (several plugins on one PostgreSQL) has nothing to show.
  if (!model.servers?.length) return html``;
  const rows = model.servers.map(
    (s) =>
      html`<tr>
        <td data-label="server">${s.name}</td>
        <td data-label="followed by">
          ${s.owner ?? "nobody"}${s.followed ? "" : html` <span class="state needs">not followed</span>`}
        </td>
        <td data-label="since">${ago(s.ownedSince, model.now)}</td>
        <td data-label="stream seen">${s.seenAgoMs === null ? "" : ago(model.now - s.seenAgoMs, model.now)}</td>
      </tr>`,
  );
  return html`<section>
    <h2>The fleet's servers</h2>
    <table>
      <thead>
        <tr>
          <th>server</th>
          <th>followed by</th>
          <th>since</th>
          <th>stream seen</th>
        </tr>
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>
  </section>`;
}

/** One window's pictures: its continuations, its spend, and its sessions stopped by reason. */
function period(title: string, series: Series, stopped: Array<{ reason: string; sessions: number }>): Markup {
  return html`<section>
    <h2>${title}</h2>
    <div class="charts">
      ${bars("Continuations", series.continuations, series, String)} ${bars("Spend", series.cost, series, money)}
      ${stops("Sessions stopped, by reason", stopped)}
    </div>
  </section>`;
}

export function chartsContent(model: ChartsModel): Markup {
  return html`${period("The last day, per hour", model.day, model.stopsDay)}
  ${period("The last month, per day", model.month, model.stopsMonth)} ${servers(model)}`;
}
