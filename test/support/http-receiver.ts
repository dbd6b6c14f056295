// A loopback HTTP receiver for the notice channels: it records each request (method, path, headers, raw body) and
// answers as the test says — a status with headers and a body, or never (for a timeout). Listens on 127.0.0.1 only.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";

export interface Received {
  method: string;
  /** The path and query the request was sent to. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as it arrived. */
  body: string;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** What the receiver does with a request: answer it, or hold it unanswered until the receiver closes. */
export type Answering = (request: Received) => Answer | "never";

export interface Receiver {
  /** `http://127.0.0.1:<port>` followed by `path`. */
  url(path?: string): string;
  requests: Received[];
  close(): Promise<void>;
}

export async function startReceiver(answering: Answering = () => ({ status: 200 })): Promise<Receiver> {
  const requests: Received[] = [];
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const received = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(received);
      const answer = answering(received);
      if (answer === "never") return void held.push(res);
      res.writeHead(answer.status, answer.headers).end(answer.body ?? "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: (path = "/") => `http://127.0.0.1:${port}${path}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nothing listens on: one just opened and closed again. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
