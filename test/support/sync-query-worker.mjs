// The thread behind sync-query.ts: it runs each statement on a kept connection to its database and answers through
// the shared flag the caller is blocked on. Plain JavaScript, because a worker thread runs outside vitest's transform.
import { parentPort, workerData } from "node:worker_threads";
import pg from "pg";

/** Connections kept open, the most recently used last: a test file may create a database per test. */
const MAX_KEPT = 4;
const clients = new Map();

async function clientFor(url) {
  let client = clients.get(url);
  if (client) {
    clients.delete(url);
    clients.set(url, client);
    return client;
  }
  client = new pg.Client({ connectionString: url });
  // A connection the server ended (a test stopped it) is dropped here, and the next statement opens a new one.
  client.on("error", () => clients.get(url) === client && clients.delete(url));
  client.on("end", () => clients.get(url) === client && clients.delete(url));
  await client.connect();
  clients.set(url, client);
  for (const [oldUrl, old] of clients) {
    if (clients.size <= MAX_KEPT) break;
    clients.delete(oldUrl);
    void old.end().catch(() => undefined);
  }
  return client;
}

const flag = new Int32Array(workerData.flag);

parentPort.on("message", async ({ url, text, port }) => {
  let answer;
  try {
    const result = await (await clientFor(url)).query(text);
    const last = Array.isArray(result) ? result.at(-1) : result;
    answer = { rows: last?.rows ?? [] };
  } catch (error) {
    clients
      .get(url)
      ?.end()
      .catch(() => undefined);
    clients.delete(url);
    answer = { error: error instanceof Error ? error.message : String(error) };
  }
  // The caller closes its end once it has read the answer: closing this end here could race the message.
  port.postMessage(answer);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
