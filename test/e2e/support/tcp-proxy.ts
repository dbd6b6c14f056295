// A TCP proxy between the standalone service and OpenCode, for faults that happen on the wire while OpenCode itself
// keeps running: cut every connection (a network blip), lose the answer to one request after OpenCode handled it
// (a reset connection after delivery), slow every answer but the event stream down (a slow link), or let the open
// connections die silently, as a link does that drops packets without a reset.
import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private open = true;
  /** Requests whose first line matches this lose their answer (once each); the count of answers lost so far. */
  private dropPattern: RegExp | undefined;
  dropped = 0;
  private refusePattern: RegExp | undefined;
  /** Requests closed before they reached OpenCode (see `refuseRequestsTo`). */
  refused = 0;
  /** Delay of every answer except the event stream's. */
  private latencyMs = 0;
  /** Connections whose bytes are dropped from now on, both ways, while both ends think them open. */
  private readonly silenced = new WeakSet<Socket>();

  constructor(private readonly targetPort: number) {}

  async start(): Promise<number> {
    this.server = createServer((client) => {
      if (!this.open) {
        client.destroy();
        return;
      }
      const upstream = connect(this.targetPort, "127.0.0.1");
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on("close", () => this.sockets.delete(socket));
        socket.on("error", () => socket.destroy());
      }
      let dropNextAnswer = false;
      let stream = false;
      client.on("data", (chunk: Buffer) => {
        if (this.silenced.has(client)) return;
        const firstLine = chunk.toString("latin1", 0, Math.min(chunk.length, 200)).split("\r\n", 1)[0] ?? "";
        if (/^[A-Z]+ \//.test(firstLine)) {
          if (this.refusePattern?.test(firstLine)) {
            // Closed before a byte of it reaches OpenCode: the caller's request fails, and nothing was delivered.
            this.refused++;
            client.destroy();
            upstream.destroy();
            return;
          }
          stream = /^GET \/(global\/)?event\b/.test(firstLine);
          if (this.dropPattern?.test(firstLine)) dropNextAnswer = true;
        }
        upstream.write(chunk);
      });
      upstream.on("data", (chunk: Buffer) => {
        if (this.silenced.has(client)) return;
        if (dropNextAnswer) {
          // OpenCode has handled the request and answered; the answer never reaches the caller.
          dropNextAnswer = false;
          this.dropped++;
          client.destroy();
          upstream.destroy();
          return;
        }
        if (this.latencyMs > 0 && !stream) setTimeout(() => client.write(chunk), this.latencyMs);
        else client.write(chunk);
      });
      client.on("close", () => upstream.destroy());
      upstream.on("close", () =>
        this.latencyMs > 0 && !stream ? setTimeout(() => client.destroy(), this.latencyMs + 50) : client.destroy(),
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    return (this.server.address() as AddressInfo).port;
  }

  /** The answers to requests whose first line (`POST /session/…/prompt_async HTTP/1.1`) matches are lost. */
  dropAnswersTo(pattern: RegExp | undefined): void {
    this.dropPattern = pattern;
  }

  /** Requests whose first line matches are closed before they reach OpenCode. */
  refuseRequestsTo(pattern: RegExp | undefined): void {
    this.refusePattern = pattern;
  }

  /** Every answer except the event stream's arrives this much later. */
  slowDown(latencyMs: number): void {
    this.latencyMs = latencyMs;
  }

  /** Every connection open now goes silent without closing; new ones work. */
  silenceOpenConnections(): void {
    for (const socket of this.sockets) this.silenced.add(socket);
  }

  /** Drops every connection and refuses new ones. */
  cut(): void {
    this.open = false;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.open = true;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
