// The page's live feed: one poll of the database for the whole process, however many pages are open, and only while
// one is. Every decision is an audit row and every continuation an injection, so the newest of each (found through
// their indexes) moves whenever anything a page shows could have changed; each open page is then told to redraw.
// Server-sent events, so a browser reconnects by itself.
import type { ServerResponse } from "node:http";
import type { SqlReader } from "../store/operator/reader.js";

/**
 * A quarter of the page's promise of one second: a change is seen within this, then drawn. With 400 ms a change took
 * 1.2 s to show on a machine whose two cores ran three test workers and their OpenCode servers (180 ms at rest).
 */
export const POLL_MS = 250;
/** A comment line now and then keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

export const MARK_SQL = `SELECT (SELECT max(id) FROM audit_events) AS audit,
  (SELECT max(created_at) FROM injections) AS injected,
  (SELECT max(recorded_at) FROM continuation_bills) AS billed`;

export class LiveFeed {
  private readonly pages = new Set<ServerResponse>();
  private timer: NodeJS.Timeout | undefined;
  private keepalive: NodeJS.Timeout | undefined;
  private mark: string | undefined;
  private polling = false;
  /** Polls made, for the figure the docs state (statements per second at rest). */
  polls = 0;

  constructor(
    private readonly reader: SqlReader,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  get open(): number {
    return this.pages.size;
  }

  /** Holds `res` open as an event stream until the browser goes. */
  follow(res: ServerResponse): void {
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
    });
    res.write("retry: 1000\n\n");
    // The page compares the mark it was drawn at with this one, and redraws when they differ.
    if (this.mark !== undefined) res.write(`event: change\ndata: ${this.mark}\n\n`);
    this.pages.add(res);
    res.on("close", () => {
      this.pages.delete(res);
      if (this.pages.size === 0) this.pause();
    });
    this.timer ??= setInterval(() => void this.poll(), POLL_MS);
    this.keepalive ??= setInterval(() => this.send(": keepalive\n\n"), KEEPALIVE_MS);
  }

  private pause(): void {
    clearInterval(this.timer);
    clearInterval(this.keepalive);
    this.timer = this.keepalive = undefined;
    this.mark = undefined;
  }

  /** The database's mark now: what a page drawn now was drawn at. */
  async current(): Promise<string> {
    const [row] = await this.reader.all<Record<string, unknown>>(MARK_SQL);
    return JSON.stringify([row?.audit, row?.injected, row?.billed].map((v) => (v == null ? null : String(v))));
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      this.polls++;
      const mark = await this.current();
      if (mark !== this.mark) this.send(`event: change\ndata: ${mark}\n\n`);
      this.mark = mark;
    } catch (error) {
      this.onError(error);
    } finally {
      this.polling = false;
    }
  }

  private send(text: string): void {
    for (const page of this.pages) page.write(text);
  }

  close(): void {
    this.pause();
    for (const page of this.pages) page.end();
    this.pages.clear();
  }
}
