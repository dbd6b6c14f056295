// The HostPort of an engine process in the crash and multi-process tests: every call goes to the ScriptedServer.
import { Agent, request } from "node:http";
import type { HostPort, PromptRequest } from "../../src/host/port.js";

type Post = (body: string, signal?: AbortSignal) => Promise<{ status: number; text: string }>;

/**
 * One POST over node:http on kept-alive connections: under Node, fetch's streams cost an engine process making a dozen
 * calls per session as much CPU as the engine itself (1,000 sessions: 19.2 CPU-s with fetch, 10.9 with this).
 */
function nodePost(url: string): Post {
  const agent = new Agent({ keepAlive: true });
  return (body, signal) =>
    new Promise((resolve, reject) => {
      const req = request(
        url,
        { method: "POST", agent, signal, headers: { "content-type": "application/json" } },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (text += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(body);
    });
}

/** Under Bun, fetch is its native client, and node:http a layer over it (1,000 sessions took 10.1 s, then 12.7). */
function fetchPost(url: string): Post {
  return async (body, signal) => {
    const response = await fetch(url, { method: "POST", body, signal });
    return { status: response.status, text: await response.text() };
  };
}

export function rpcHost(url: string, options: { pauseBeforePromptMs?: number } = {}): HostPort {
  const post = process.versions.bun ? fetchPost(url) : nodePost(url);
  const call = async <T>(method: string, args: unknown[], signal?: AbortSignal): Promise<T> => {
    const response = await post(JSON.stringify({ method, args, pid: process.pid }), signal);
    const body = JSON.parse(response.text) as { result?: T; error?: string };
    if (response.status !== 200) throw new Error(body.error ?? `HTTP ${response.status}`);
    return body.result as T;
  };
  return {
    getTodos: (id, signal) => call("getTodos", [id], signal),
    getMessages: (id, signal) => call("getMessages", [id], signal),
    getSession: (id, signal) => call("getSession", [id], signal),
    getChildren: (id, signal) => call("getChildren", [id], signal),
    getStatuses: (signal) => call("getStatuses", [], signal),
    getAgents: (signal) => call("getAgents", [], signal),
    mayRunCommand: async () => ({ allowed: false, why: "the crash suite's host runs no checks" }),
    async prompt(request: PromptRequest, signal) {
      // Widens the window between the `pending` row and the call, so that kills land there too.
      if (options.pauseBeforePromptMs)
        await new Promise((r) => setTimeout(r, Math.random() * options.pauseBeforePromptMs!));
      await call("prompt", [request], signal);
    },
    toast: async () => undefined,
    // What the engine would log through OpenCode goes to stderr, where a failing test shows it.
    log: (level, message) => {
      if (level === "error" || level === "warn") process.stderr.write(`${level}: ${message}\n`);
    },
  };
}
