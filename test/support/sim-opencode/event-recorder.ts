// An event stream read raw (`GET /event`), so that its framing is seen as sent: every frame, the headers, and the
// events parsed, each tagged with the phase of the exercise it arrived in.

/**
 * The events an /event stream writes of its own (its connection, its heartbeats): OpenCode's /event route adds them to
 * each stream; they are never published on the bus its plugins hear.
 */
export const STREAM_ONLY_EVENTS: ReadonlySet<string> = new Set(["server.connected", "server.heartbeat"]);

export interface RecordedEvent {
  phase: string;
  type: string;
  properties: Record<string, unknown>;
  envelope: Record<string, unknown>;
}

export class EventRecorder {
  readonly events: RecordedEvent[] = [];
  /** Every frame as received, separator included. */
  readonly frames: string[] = [];
  headers: Record<string, string> = {};
  phase = "connect";
  private readonly abort = new AbortController();
  private reading: Promise<void> | undefined;

  async open(url: string): Promise<void> {
    const res = await fetch(url, { signal: this.abort.signal });
    if (res.status !== 200 || !res.body) throw new Error(`GET ${url} answered ${res.status}`);
    this.headers = Object.fromEntries(res.headers);
    this.reading = this.read(res.body).catch((error: unknown) => {
      if (!this.abort.signal.aborted) throw error;
    });
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.reading;
  }

  /** The events of `phase` about `sessionId` (or about no session at all). */
  of(phase: string, sessionId?: string): RecordedEvent[] {
    return this.events.filter((e) => {
      if (e.phase !== phase) return false;
      const about = sessionOf(e);
      return about === undefined || sessionId === undefined || about === sessionId;
    });
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end + 2);
        buffer = buffer.slice(end + 2);
        this.frames.push(frame);
        const data = frame.startsWith("data: ") ? frame.slice(6, -2) : undefined;
        if (data === undefined) continue;
        const envelope = JSON.parse(data) as Record<string, unknown>;
        const properties = (envelope.properties ?? {}) as Record<string, unknown>;
        this.events.push({ phase: this.phase, type: String(envelope.type), properties, envelope });
      }
    }
  }
}

/** The session an event is about, wherever its payload says it. */
export function sessionOf(event: { properties: Record<string, unknown> }): string | undefined {
  const p = event.properties;
  if (typeof p.sessionID === "string") return p.sessionID;
  const info = p.info as { id?: unknown } | undefined;
  return typeof info?.id === "string" && info.id.startsWith("ses") ? info.id : undefined;
}
