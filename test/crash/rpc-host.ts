// The HostPort of an engine process in the crash and multi-process tests: every call goes to the ScriptedServer.
import type { HostPort, PromptRequest } from "../../src/host/port.js";

export function rpcHost(url: string, options: { pauseBeforePromptMs?: number } = {}): HostPort {
  const call = async <T>(method: string, args: unknown[], signal?: AbortSignal): Promise<T> => {
    const response = await fetch(url, {
      method: "POST",
      body: JSON.stringify({ method, args, pid: process.pid }),
      signal,
    });
    const body = (await response.json()) as { result?: T; error?: string };
    if (!response.ok) throw new Error(body.error ?? `HTTP ${response.status}`);
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
