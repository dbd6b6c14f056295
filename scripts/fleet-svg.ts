// The picture of docs/capacity.md: how the fleet benchmark's figures grow from size to size (bench-results/fleet.json),
// one small chart a figure, drawn as SVG text so that it is rendered the same on every machine and reviewed as a diff.
import type { FleetResults } from "../bench/fleet/report.js";

type Size = FleetResults["sizes"][number];

interface Series {
  label: string;
  values: Array<number | null | undefined>;
  color: string;
}

interface Panel {
  title: string;
  unit: string;
  series: Series[];
  /** A horizontal line to compare with (the lease), with its label. */
  reference?: { value: number; label: string };
}

const WIDTH = 1000;
const COLUMNS = 4;
const PANEL_W = WIDTH / COLUMNS;
const PANEL_H = 230;
const TOP = 46;
const PLOT = { left: 46, right: 14, top: 40, bottom: 50 };
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];

const escape = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

/** A value as a label: few digits, by size. */
export function short(n: number): string {
  const a = Math.abs(n);
  if (Number.isInteger(n) && a < 10_000) return String(n);
  if (a >= 10_000) return `${Math.round(n / 1000)}k`;
  if (a >= 100) return n.toFixed(0);
  if (a >= 10) return n.toFixed(1);
  if (a >= 1) return n.toFixed(2);
  return n.toPrecision(2);
}

/** 1, 2 or 5 times a power of ten, at least `max`. */
function niceTop(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * power).find((v) => v >= max)!;
}

const sizeLabel = (s: Size) => `${s.size.replicas}×${s.size.servers}×${s.size.sessions}`;

function panelSvg(panel: Panel, labels: string[], x0: number, y0: number): string {
  const w = PANEL_W - PLOT.left - PLOT.right;
  const h = PANEL_H - PLOT.top - PLOT.bottom;
  const all = panel.series.flatMap((s) => s.values.filter((v): v is number => typeof v === "number"));
  const top = niceTop(Math.max(0, ...all, panel.reference?.value ?? 0) * 1.1);
  // Inset from the axes, so that the first and last sizes' labels fit.
  const inset = 34;
  const x = (i: number) =>
    x0 + PLOT.left + (labels.length === 1 ? w / 2 : inset + (i * (w - 2 * inset)) / (labels.length - 1));
  const y = (v: number) => y0 + PLOT.top + h - (v / top) * h;
  const out: string[] = [
    `<text x="${x0 + PANEL_W / 2}" y="${y0 + 16}" class="title">${escape(panel.title)}</text>`,
    `<text x="${x0 + PANEL_W / 2}" y="${y0 + 30}" class="unit">${escape(panel.unit)}</text>`,
    `<line x1="${x0 + PLOT.left}" y1="${y(0)}" x2="${x0 + PLOT.left + w}" y2="${y(0)}" class="axis"/>`,
    `<line x1="${x0 + PLOT.left}" y1="${y(0)}" x2="${x0 + PLOT.left}" y2="${y(top)}" class="axis"/>`,
    `<text x="${x0 + PLOT.left - 4}" y="${y(top) + 4}" class="tick" text-anchor="end">${short(top)}</text>`,
    `<text x="${x0 + PLOT.left - 4}" y="${y(0) + 4}" class="tick" text-anchor="end">0</text>`,
  ];
  // Two lines a size (replicas × servers, then × sessions), so that neighbours do not run into each other.
  labels.forEach((label, i) => {
    const [head, sessions] = label.split(/×(?=[^×]*$)/);
    out.push(
      `<text x="${x(i)}" y="${y(0) + 13}" class="tick" text-anchor="middle">${escape(head!)}` +
        `<tspan x="${x(i)}" dy="10">×${escape(sessions!)}</tspan></text>`,
    );
  });
  if (panel.reference) {
    const ry = y(panel.reference.value);
    out.push(`<line x1="${x0 + PLOT.left}" y1="${ry}" x2="${x0 + PLOT.left + w}" y2="${ry}" class="reference"/>`);
    out.push(
      `<text x="${x0 + PLOT.left + w}" y="${ry - 3}" class="tick" text-anchor="end">${panel.reference.label}</text>`,
    );
  }
  panel.series.forEach((s, k) => {
    const points = s.values.flatMap((v, i) => (typeof v === "number" ? [[x(i), y(v), v] as const] : []));
    if (points.length > 1)
      out.push(
        `<polyline points="${points.map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`).join(" ")}" stroke="${s.color}" class="line"/>`,
      );
    for (const [px, py, v] of points) {
      out.push(`<circle cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="3" fill="${s.color}"/>`);
      out.push(
        `<text x="${px.toFixed(1)}" y="${(py - 6).toFixed(1)}" class="value" fill="${s.color}">${short(v)}</text>`,
      );
    }
    const lx = x0 + PLOT.left + (k * w) / panel.series.length;
    out.push(`<rect x="${lx}" y="${y0 + PANEL_H - 16}" width="8" height="8" fill="${s.color}"/>`);
    out.push(`<text x="${lx + 11}" y="${y0 + PANEL_H - 8}" class="legend">${escape(s.label)}</text>`);
  });
  return out.join("\n");
}

const series = (label: string, values: Series["values"], k: number): Series => ({
  label,
  values,
  color: COLORS[k % COLORS.length]!,
});

/** Below zero, a figure net of the idle load says the fleet stalled: not drawn. */
const positive = (v: number | null | undefined) => (typeof v === "number" && v >= 0 ? v : null);
const seconds = (ms: number | null | undefined) => (typeof ms === "number" ? ms / 1000 : ms);

function panels(sizes: Size[]): Panel[] {
  const of = <T>(pick: (s: Size) => T) => sizes.map(pick);
  const lease = sizes[0]?.conditions.settings as { leaseMs?: number } | undefined;
  return [
    {
      title: "continuations",
      unit: "per second",
      series: [
        series(
          "done",
          of((s) => s.throughput.continuationsPerSecond),
          0,
        ),
        series(
          "offered",
          of((s) => s.throughput.offeredPerSecond),
          3,
        ),
      ],
    },
    {
      title: "fire lateness",
      unit: "seconds (metrics)",
      series: [
        series(
          "p50",
          of((s) => s.lateness.p50Seconds),
          0,
        ),
        series(
          "p99",
          of((s) => s.lateness.p99Seconds),
          1,
        ),
      ],
    },
    {
      title: "PostgreSQL per continuation",
      unit: "statements",
      series: [
        series(
          "all",
          of((s) => s.database.statementsPerContinuation),
          0,
        ),
        series(
          "beyond idle",
          of((s) => positive(s.database.statementsPerContinuationBeyondIdle)),
          2,
        ),
      ],
    },
    {
      title: "PostgreSQL load",
      unit: "per second",
      series: [
        series(
          "statements",
          of((s) => s.database.statementsPerSecond),
          0,
        ),
        series(
          "transactions",
          of((s) => s.database.transactionsPerSecond),
          1,
        ),
      ],
    },
    {
      title: "following, nothing to do",
      unit: "statements per second per server",
      series: [
        series(
          "idle",
          of((s) => s.idle.statementsPerSecondPerServer),
          0,
        ),
      ],
    },
    {
      title: "replica CPU",
      unit: "ms per second per followed server",
      series: [
        series(
          "working",
          of((s) => s.perReplica.cpuMsPerSecondPerServer),
          0,
        ),
        series(
          "idle",
          of((s) => s.idle.replicaCpuMsPerSecondPerServer),
          2,
        ),
      ],
    },
    {
      title: "replica memory",
      unit: "MB resident (servers per replica grow with size)",
      series: [
        series(
          "working",
          of((s) => s.perReplica.rssMB),
          0,
        ),
        series(
          "idle",
          of((s) => s.idle.replicaRssMB),
          2,
        ),
      ],
    },
    {
      title: "a killed replica's work",
      unit: "seconds (its countdowns: median)",
      series: [
        series(
          "servers",
          of((s) => seconds(s.kill?.takeoverMs)),
          0,
        ),
        series(
          "due",
          of((s) => seconds(s.kill?.dueMs?.p50)),
          2,
        ),
        series(
          "fired",
          of((s) => seconds(s.kill?.firedMs?.p50)),
          1,
        ),
      ],
      reference: lease?.leaseMs ? { value: lease.leaseMs / 1000, label: `lease ${lease.leaseMs / 1000} s` } : undefined,
    },
  ];
}

export function renderSvg(results: FleetResults): string {
  const sizes = results.sizes;
  const labels = sizes.map(sizeLabel);
  const all = panels(sizes);
  const rows = Math.ceil(all.length / COLUMNS);
  const height = TOP + rows * PANEL_H + 8;
  const body = all.map((p, i) => panelSvg(p, labels, (i % COLUMNS) * PANEL_W, TOP + Math.floor(i / COLUMNS) * PANEL_H));
  const c = results.conditions;
  const subtitle = `replicas × servers × sessions; ${String(c.cpus)} cores (${String(c.cpu)}), ${String(c.at).slice(0, 10)}`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" font-family="sans-serif">`,
    "<style>.title{font-size:13px;font-weight:bold;text-anchor:middle}.unit{font-size:10px;fill:#555;text-anchor:middle}" +
      ".axis{stroke:#888;stroke-width:1}.tick{font-size:9px;fill:#444}.value{font-size:9px;text-anchor:middle}" +
      ".legend{font-size:9px;fill:#333}.line{fill:none;stroke-width:1.5}.reference{stroke:#999;stroke-dasharray:4 3}</style>",
    `<rect width="${WIDTH}" height="${height}" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="20" class="title" style="font-size:15px">The fleet benchmark by size (npm run bench:fleet)</text>`,
    `<text x="${WIDTH / 2}" y="36" class="unit">${escape(subtitle)}</text>`,
    ...body,
    "</svg>",
    "",
  ].join("\n");
}
