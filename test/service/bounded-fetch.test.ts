// A followed server's HTTP calls, a few at a time: what a replica holds open to one server is bounded whatever the
// number of sessions it looks at together, and the event stream is never held up behind the reads.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { boundedFetch, REQUESTS_PER_SERVER } from "../../src/service/bounded-fetch.js";

interface Loopback {
  url: string;
  /** Most sockets open at once, and most requests being answered at once. */
  most: { sockets: number; requests: number };
  release(): void;
  close(): Promise<void>;
}

let server: Loopback | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Answers every request once `release()` is called (the event stream at once, and it stays open). */
async function loopback(): Promise<Loopback> {
  const sockets = new Set<Socket>();
  const waiting: Array<() => void> = [];
  let released = false;
  let requests = 0;
  const most = { sockets: 0, requests: 0 };
  const http: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith("/event")) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('data: {"type":"server.connected"}\n\n');
      return;
    }
    most.requests = Math.max(most.requests, ++requests);
    const answer = () => {
      requests--;
      if (req.url?.startsWith("/empty")) return void res.writeHead(204).end();
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ path: req.url }));
    };
    if (released) answer();
    else waiting.push(answer);
  });
  http.on("connection", (socket: Socket) => {
    sockets.add(socket);
    most.sockets = Math.max(most.sockets, sockets.size);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    most,
    release() {
      released = true;
      for (const answer of waiting.splice(0)) answer();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        http.close(() => resolve());
      }),
  };
}

describe("boundedFetch", () => {
  it("holds at most REQUESTS_PER_SERVER connections to a server, however many calls are made together", async () => {
    server = await loopback();
    const f = boundedFetch();
    const calls = Array.from({ length: 24 }, (_, i) => f(new Request(`${server!.url}/session/${i}`)));
    await expect.poll(() => server!.most.requests).toBe(REQUESTS_PER_SERVER);
    server.release();
    const answers = await Promise.all(calls);
    const bodies = await Promise.all(answers.map((r) => r.json() as Promise<{ path: string }>));
    expect(bodies.map((b) => b.path)).toEqual(Array.from({ length: 24 }, (_, i) => `/session/${i}`));
    expect(server.most.requests).toBe(REQUESTS_PER_SERVER);
    expect(server.most.sockets).toBeLessThanOrEqual(REQUESTS_PER_SERVER);
  });

  it("answers as fetch does: the status, the headers, a body or none", async () => {
    server = await loopback();
    server.release();
    const f = boundedFetch();
    const empty = await f(new Request(`${server.url}/empty`));
    expect([empty.status, await empty.text()]).toEqual([204, ""]);
    const json = await f(new Request(`${server.url}/agent`));
    expect([json.status, json.headers.get("content-type")]).toEqual([200, "application/json"]);
    expect(await json.json()).toEqual({ path: "/agent" });
  });

  it("lets the event stream through while every turn is taken, and drops a call aborted while it waits", async () => {
    server = await loopback();
    const f = boundedFetch(2);
    const held = [f(new Request(`${server.url}/a`)), f(new Request(`${server.url}/b`))];
    await expect.poll(() => server!.most.requests).toBe(2);
    const abort = new AbortController();
    const waiting = f(new Request(`${server.url}/c`, { signal: abort.signal }));
    const stream = await f(new Request(`${server.url}/event`));
    expect(stream.headers.get("content-type")).toBe("text/event-stream");
    await stream.body?.cancel();
    abort.abort(new Error("the look gave up"));
    await expect(waiting).rejects.toThrow("the look gave up");
    server.release();
    await Promise.all(held);
    expect(server.most.requests).toBe(2);
  });
});
