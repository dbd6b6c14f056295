// What a supervisor and Prometheus ask a running service (`serve --listen`): `/healthz` (and `/livez`, Kubernetes's
// name) — the process runs its loop; `/readyz` — it can do its work now (its database answers and, in a fleet, it holds
// its leases), else 503 with the reason on one line; `/metrics` — the Prometheus exposition. Loopback unless an address
// is given: the metrics name the servers followed, which is nobody else's business.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Metrics } from "./metrics.js";

export interface Readiness {
  ready: boolean;
  /** Why not, in one line. */
  reason?: string;
}

export interface StatusSources {
  metrics: Metrics;
  /** The service's loop runs (false once it is stopping). */
  alive(): boolean;
  ready(): Promise<Readiness>;
}

export interface Listen {
  host: string;
  port: number;
}

export interface StatusServer {
  /** Where it listens, e.g. http://127.0.0.1:9464. */
  readonly url: string;
  close(): Promise<void>;
}

/** `9464`, `:9464`, `127.0.0.1:9464`, `0.0.0.0:9464`, `[::1]:9464`; the host is loopback when left out. */
export function parseListen(text: string): Listen {
  const match = /^(?:(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]*)):)?(\d{1,5})$/.exec(text.trim());
  const port = Number(match?.[3]);
  if (!match || !Number.isInteger(port) || port < 0 || port > 65_535)
    throw new Error(`--listen takes [host]:port, such as 127.0.0.1:9464 or :9464, got "${text}"`);
  return { host: match[1] ?? (match[2] || "127.0.0.1"), port };
}

function reply(res: ServerResponse, status: number, body: string, type = "text/plain; charset=utf-8"): void {
  res.writeHead(status, { "content-type": type, "cache-control": "no-store" });
  res.end(body);
}

async function route(req: IncomingMessage, res: ServerResponse, sources: StatusSources): Promise<void> {
  if (req.method !== "GET" && req.method !== "HEAD") return reply(res, 405, "GET only\n");
  const path = new URL(req.url ?? "/", "http://status").pathname;
  switch (path) {
    case "/healthz":
    case "/livez":
      return sources.alive() ? reply(res, 200, "ok\n") : reply(res, 503, "stopping\n");
    case "/readyz": {
      const { ready, reason } = await sources.ready();
      return ready ? reply(res, 200, "ready\n") : reply(res, 503, `not ready: ${reason ?? "unknown"}\n`);
    }
    case "/metrics":
      return reply(res, 200, await sources.metrics.text(), sources.metrics.contentType);
    default:
      return reply(res, 404, "try /healthz, /livez, /readyz or /metrics (and / for the page, where it is served)\n");
  }
}

/** Answers the page's own paths (src/dashboard), or says they are none of its. */
export interface PageHandler {
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>;
}

/**
 * The service's answers on `listen`; the page's first when the service serves one (its paths are its own: `/`,
 * `/session/…`, `/events`, `/assets/…`).
 */
export function startStatusServer(listen: Listen, sources: StatusSources, page?: PageHandler): Promise<StatusServer> {
  return listenHttp(listen, async (req, res) => {
    if (page && (await page.handle(req, res))) return;
    await route(req, res, sources);
  });
}

/** An HTTP server on `listen` answering with `handler`; a handler's failure is a 500 with its message. */
export function listenHttp(
  listen: Listen,
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<StatusServer> {
  const server = createServer((req, res) => {
    handler(req, res).catch((error: unknown) => {
      if (!res.headersSent) reply(res, 500, `${error instanceof Error ? error.message : String(error)}\n`);
      else res.destroy();
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port, listen.host, () => {
      server.off("error", reject);
      const { address, port } = server.address() as AddressInfo;
      const host = address.includes(":") ? `[${address}]` : address;
      resolve({
        url: `http://${host}:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
