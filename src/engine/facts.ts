// Gathers what the guards need from OpenCode, all reads in parallel and each one bounded. A read that fails leaves
// its fact unknown (the guard passes) except the todos, whose failure is itself a reason to skip.
import { inspectMessages, type MessageFacts } from "../core/messages.js";
import type { SessionStatus } from "../core/events.js";
import type { Todo } from "../core/todos.js";
import type { HostAgent, HostPort } from "../host/port.js";
import { errorMessage, withTimeout } from "./host-calls.js";

export interface HostFacts {
  todos: Todo[] | "fetch_failed";
  todoError?: string;
  messages?: MessageFacts;
  parentId?: string | null;
  /** The session's own status as the host reports it (`idle` when absent from the status map). */
  status?: SessionStatus;
  busyChildren?: number;
  agents?: HostAgent[];
}

/** Enough recent messages to find the latest real one in a long autonomous run. */
const MESSAGE_WINDOW = 60;
const AGENT_CACHE_MS = 60_000;

export class FactGatherer {
  private agents: { list: HostAgent[]; at: number } | undefined;

  constructor(
    private readonly host: HostPort,
    private readonly timeoutMs: number,
    private readonly monotonic: () => number,
  ) {}

  async gather(sessionId: string): Promise<HostFacts> {
    const t = this.timeoutMs;
    const [todos, messages, session, family, agents] = await Promise.allSettled([
      withTimeout("todo read", t, (s) => this.host.getTodos(sessionId, s)),
      withTimeout("messages read", t, (s) => this.host.getMessages(sessionId, s, MESSAGE_WINDOW)),
      withTimeout("session read", t, (s) => this.host.getSession(sessionId, s)),
      withTimeout("children read", t, async (s) => {
        const [children, statuses] = await Promise.all([this.host.getChildren(sessionId, s), this.host.getStatuses(s)]);
        return { children, statuses };
      }),
      this.agentList(),
    ]);
    const facts: HostFacts = { todos: todos.status === "fulfilled" && Array.isArray(todos.value) ? todos.value : "fetch_failed" };
    if (todos.status === "rejected") facts.todoError = errorMessage(todos.reason);
    else if (!Array.isArray(todos.value)) facts.todoError = "OpenCode answered something that is not a todo list";
    if (messages.status === "fulfilled" && Array.isArray(messages.value)) facts.messages = inspectMessages(messages.value);
    if (session.status === "fulfilled" && session.value) facts.parentId = session.value.parentId ?? null;
    if (family.status === "fulfilled") {
      const { children, statuses } = family.value;
      facts.status = statuses[sessionId] ?? "idle";
      facts.busyChildren = children.filter((c) => statuses[c.id] === "busy" || statuses[c.id] === "retry").length;
    }
    if (agents.status === "fulfilled") facts.agents = agents.value;
    return facts;
  }

  private async agentList(): Promise<HostAgent[]> {
    const cached = this.agents;
    if (cached && this.monotonic() - cached.at < AGENT_CACHE_MS) return cached.list;
    const list = await withTimeout("agent list", this.timeoutMs, (s) => this.host.getAgents(s));
    this.agents = { list, at: this.monotonic() };
    return list;
  }
}
