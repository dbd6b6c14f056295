// A loopback TCP proxy in front of PostgreSQL that can lose one statement's answer on purpose: once a client sends
// bytes containing the marker, nothing the server sends back on that connection reaches the client any more (what a
// client sees when its driver loses an answer). It counts the clients that closed such a connection, to show that the one whose
// answer was lost is closed rather than reused. Runs under Node and under Bun.
import { createServer, connect, type Server, type Socket } from "node:net";

export class SwallowingProxy {
  /** Connections on which an answer was swallowed. */
  swallowed = 0;
  /** Of those, the ones the client itself closed (not the server). */
  swallowedClosedByClient = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly marker: Buffer,
  ) {}

  static async start(targetPort: number, marker: string): Promise<SwallowingProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    const proxy = new SwallowingProxy(server, port, Buffer.from(marker));
    server.on("connection", (client) => proxy.relay(client, targetPort));
    return proxy;
  }

  /** `url` (a postgres:// URL on the same server) through this proxy. */
  via(url: string): string {
    const at = new URL(url);
    at.port = String(this.port);
    return at.toString();
  }

  private relay(client: Socket, targetPort: number): void {
    const upstream = connect(targetPort, "127.0.0.1");
    this.sockets.add(client).add(upstream);
    let deaf = false;
    client.on("data", (chunk: Buffer) => {
      if (!deaf && chunk.includes(this.marker)) {
        deaf = true;
        this.swallowed++;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (!deaf) client.write(chunk);
    });
    let upstreamClosed = false;
    let counted = false;
    // A client closes with a Terminate message and FIN ('end'), or drops the socket ('close').
    const closedByClient = () => {
      if (deaf && !upstreamClosed && !counted) {
        counted = true;
        this.swallowedClosedByClient++;
      }
      upstream.destroy();
    };
    client.on("end", closedByClient);
    client.on("close", closedByClient);
    upstream.on("close", () => {
      upstreamClosed = true;
      client.destroy();
    });
    client.on("error", () => undefined);
    upstream.on("error", () => undefined);
  }

  /** `swallowedClosedByClient` once it reaches `count` (a socket closes asynchronously), or after `timeoutMs`. */
  async closedByClient(count: number, timeoutMs = 5000): Promise<number> {
    const until = performance.now() + timeoutMs;
    while (this.swallowedClosedByClient < count && performance.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 20));
    return this.swallowedClosedByClient;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
