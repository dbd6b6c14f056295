// Synchronous statements on a PostgreSQL database, for tests that read rows the way they read a SQLite file: the
// statement runs on a worker thread over a kept connection while this thread waits on a shared flag. A client, not a
// psql process per statement.
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";

let worker: { thread: Worker; flag: Int32Array } | undefined;

function started(): { thread: Worker; flag: Int32Array } {
  if (worker) return worker;
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const thread = new Worker(new URL("./sync-query-worker.mjs", import.meta.url), { workerData: { flag: flag.buffer } });
  // It must not keep a test process alive; its connections close with the thread.
  thread.unref();
  thread.on("error", () => (worker = undefined));
  worker = { thread, flag };
  return worker;
}

/** How long one statement may take before the test fails instead of hanging. */
const STATEMENT_TIMEOUT_MS = 60_000;

/**
 * How long an answer may trail the flag. Seen once in a full run on a loaded machine: the flag up, the port still
 * empty ("answered nothing"), so the message is waited for rather than taken as lost.
 */
const LATE_ANSWER_MS = 5_000;
const pause = new Int32Array(new SharedArrayBuffer(4));

function answerOn<T>(port: MessagePort): T | undefined {
  for (let waited = 0; waited <= LATE_ANSWER_MS; waited += 5) {
    const received = receiveMessageOnPort(port);
    if (received) return received.message as T;
    Atomics.wait(pause, 0, 0, 5);
  }
  return undefined;
}

/** Runs `text` (no parameters: the simple protocol, so several statements are allowed) and returns the last rows. */
export function querySync<T = Record<string, unknown>>(url: string, text: string): T[] {
  const { thread, flag } = started();
  const { port1, port2 } = new MessageChannel();
  Atomics.store(flag, 0, 0);
  thread.postMessage({ url, text, port: port2 }, [port2]);
  if (Atomics.wait(flag, 0, 0, STATEMENT_TIMEOUT_MS) === "timed-out")
    throw new Error(`no answer from PostgreSQL within ${STATEMENT_TIMEOUT_MS} ms to: ${text.slice(0, 200)}`);
  const message = answerOn<{ rows: T[] } | { error: string }>(port1);
  port1.close();
  if (!message) throw new Error(`the query thread raised its flag but sent no answer within ${LATE_ANSWER_MS} ms`);
  if ("error" in message) throw new Error(`${message.error}\n  in: ${text.slice(0, 500)}`);
  return message.rows;
}
