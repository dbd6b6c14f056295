// The frame every page is drawn in: its head, the header that says which database it shows, and the attributes the
// page's script reads (the server's time, the database's mark the page was drawn at, where its live feed is).
import { duration } from "../../core/words.js";
import { html, type Fragment, type Markup } from "../html.js";

export interface Frame {
  title: string;
  /** The database shown, as a message may name it (no password). */
  database: string;
  now: number;
  mark: string;
  /** The path the page is served under ("" at the root). */
  base: string;
}

export function page(frame: Frame, content: Fragment): Markup {
  const { base } = frame;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${frame.title} · todo continuation</title>
        <link rel="stylesheet" href="${base}/assets/page.css" />
        <script src="${base}/assets/page.js" defer></script>
      </head>
      <body data-now="${frame.now}" data-mark="${frame.mark}" data-events="${base}/events">
        <header>
          <h1><a href="${base}/">Todo continuation</a></h1>
          <nav><a href="${base}/">Sessions</a><a href="${base}/charts">Pictures</a></nav>
          <span class="where">${frame.database}</span>
        </header>
        <main>${content}</main>
      </body>
    </html>`;
}

/** "12 s ago", "3 min ago"; "" for never. */
export function ago(at: number | null | undefined, now: number): string {
  if (at === null || at === undefined) return "";
  return now - at < 1000 ? "just now" : `${duration(now - at)} ago`;
}

/** The folder's last part, which names a project; the whole path is in the title attribute. */
export function projectName(directory: string): string {
  return directory.split(/[\\/]/).filter(Boolean).at(-1) ?? directory;
}
