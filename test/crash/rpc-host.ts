// The HostPort of an engine process in the crash and multi-process tests: every call goes to the ScriptedServer.
import { Agent, request } from "node:http";
import type { HostPort, PromptRequest } from "../../src/host/port.js";

/**
 * One POST over node:http on kept-alive connections. Not fetch: these suites make about a dozen calls per session for
 * thousands of sessions, and under Node fetch's streams cost the engine process as much CPU as the engine itself.
 */
function post(
  url: string,
  agent: Agent,
  body: string,
  signal?: AbortSignal,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
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

export function rpcHost(url: string, options: { pauseBeforePromptMs?: number } = {}): HostPort {
  const agent = new Agent({ keepAlive: true });
  const call = async <T>(method: string, args: unknown[], signal?: AbortSignal): Promise<T> => {
    const response = await post(url, agent, JSON.stringify({ method, args, pid: process.pid }), signal);
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
