// Gathers what the guards need from OpenCode, all reads in parallel and each one bounded. A read that fails leaves
// its fact unknown (the guard passes) except the todos, whose failure is itself a reason to skip.
import type { Config } from "../../config/resolve.js";
import type { HostFacts } from "../../core/decision-input.js";
import { inspectMessages, type InspectOptions, type SessionMessage } from "../../core/messages.js";
import type { SessionStatus } from "../../core/events.js";
import { withDiskHashes, type TurnFiles } from "../../core/work.js";
import { billTurn } from "../../core/bill.js";
import type { HostAgent, HostPort } from "../../host/port.js";
import type { SessionRow } from "../../store/schema.js";
import { errorMessage, withTimeout } from "../host-calls.js";
import type { OwnMessageIds } from "../memory/own-messages.js";

export type { HostFacts };

/** How the session's messages are read for a look: questions in text (if on), and the message that paused it. */
export function inspectOptions(config: Config, row: SessionRow | null | undefined): InspectOptions {
  return { detectTextQuestions: config.detectTextQuestions, answerOf: row?.pauseMessageId ?? null };
}

/** Enough recent messages to find the latest real one in a long autonomous run. */
const MESSAGE_WINDOW = 60;
const AGENT_CACHE_MS = 60_000;
/** How deep and how wide the tree of sub-sessions is searched for busy descendants. */
const DESCENDANT_DEPTH = 6;
const DESCENDANT_LIMIT = 200;

export class FactGatherer {
  private agents: { list: HostAgent[]; at: number } | undefined;

  constructor(
    private readonly host: HostPort,
    private readonly timeoutMs: number,
    private readonly monotonic: () => number,
    /** Which messages are the enforcer's own; without it none is taken for ours. */
    private readonly own?: OwnMessageIds,
  ) {}

  async gather(sessionId: string, options: InspectOptions = {}): Promise<HostFacts> {
    const t = this.timeoutMs;
    const startedAt = this.monotonic();
    const statusRead = withTimeout("status read", t, (s) => this.host.getStatuses(s));
    // The sub-sessions are searched in what is left of the same bound, after the statuses answered: a search that
    // runs out of time loses the busy descendants only, not the session's own status, which is what keeps a second
    // continuation off a turn another process started (one round trip more under load must not cost both).
    const descendantsRead = statusRead.then((statuses) =>
      withTimeout("children read", Math.max(0, t - (this.monotonic() - startedAt)), (s) =>
        this.busyDescendants(sessionId, statuses, s),
      ),
    );
    const [todos, messages, session, statuses, descendants, agents] = await Promise.allSettled([
      withTimeout("todo read", t, (s) => this.host.getTodos(sessionId, s)),
      withTimeout("messages read", t, (s) => this.host.getMessages(sessionId, s, MESSAGE_WINDOW)),
      withTimeout("session read", t, (s) => this.host.getSession(sessionId, s)),
      statusRead,
      descendantsRead,
      this.agentList(),
    ]);
    const facts: HostFacts = {
      todos: todos.status === "fulfilled" && Array.isArray(todos.value) ? todos.value : "fetch_failed",
    };
    if (todos.status === "rejected") facts.todoError = errorMessage(todos.reason);
    else if (!Array.isArray(todos.value)) facts.todoError = "OpenCode answered something that is not a todo list";
    if (messages.status === "fulfilled" && Array.isArray(messages.value)) {
      facts.messages = inspectMessages(messages.value, {
        ...options,
        ours: await this.ours(sessionId, messages.value),
      });
      if (facts.messages.turnFiles) facts.messages.turnFiles = await this.onDisk(facts.messages.turnFiles);
      const messageId = facts.messages.ownMessageIds.at(-1);
      const injectionId = facts.messages.ownInjectionIds.at(-1);
      if (messageId && injectionId)
        facts.lastTurn = { injectionId, messageId, bill: billTurn(messages.value, messageId) };
    }
    if (session.status === "fulfilled" && session.value) {
      facts.parentId = session.value.parentId ?? null;
      if (session.value.spend) facts.sessionSpend = session.value.spend;
    }
    // OpenCode lists only the sessions that are not idle.
    if (statuses.status === "fulfilled") facts.status = statuses.value[sessionId] ?? "idle";
    if (descendants.status === "fulfilled") facts.busyDescendants = descendants.value;
    if (agents.status === "fulfilled") facts.agents = agents.value;
    return facts;
  }

  /**
   * The busy sessions below this one, by `statuses` (OpenCode's, which lists only sessions that are not idle): the
   * tree is searched only when some other session is busy at all.
   */
  private async busyDescendants(
    sessionId: string,
    statuses: Record<string, SessionStatus>,
    signal: AbortSignal,
  ): Promise<string[]> {
    const busy = (id: string) => statuses[id] === "busy" || statuses[id] === "retry";
    if (!Object.keys(statuses).some((id) => id !== sessionId && busy(id))) return [];
    const found: string[] = [];
    const seen = new Set([sessionId]);
    let level = [sessionId];
    for (let depth = 0; depth < DESCENDANT_DEPTH && level.length > 0 && seen.size < DESCENDANT_LIMIT; depth++) {
      const children = (await Promise.all(level.map((id) => this.host.getChildren(id, signal)))).flat();
      level = [];
      for (const child of children) {
        if (seen.has(child.id)) continue;
        seen.add(child.id);
        if (busy(child.id)) found.push(child.id);
        level.push(child.id);
      }
    }
    return found;
  }

  /**
   * Whether the turn of a prompt sent with `messageId` started: the session is busy, or an answer follows that message.
   * False when OpenCode shows neither (the message may not even exist: an unknown agent is refused after the 204);
   * undefined when OpenCode cannot be read (no verdict).
   */
  async turnStarted(sessionId: string, messageId: string): Promise<boolean | undefined> {
    const t = this.timeoutMs;
    const [statuses, messages] = await Promise.allSettled([
      withTimeout("status read", t, (s) => this.host.getStatuses(s)),
      withTimeout("messages read", t, (s) => this.host.getMessages(sessionId, s, MESSAGE_WINDOW)),
    ]);
    if (
      statuses.status === "fulfilled" &&
      (statuses.value[sessionId] === "busy" || statuses.value[sessionId] === "retry")
    )
      return true;
    if (messages.status === "rejected" || !Array.isArray(messages.value)) return undefined;
    const index = messages.value.findIndex((m) => m.id === messageId);
    return index >= 0 && messages.value.slice(index + 1).some((m) => m.role === "assistant");
  }

  /**
   * The turn's files with their contents on disk now, which beat what the tool calls said (a formatter ran after a
   * write; an edit says no content). A disk that cannot be read in time leaves them as the tool calls said.
   */
  private async onDisk(turn: TurnFiles): Promise<TurnFiles> {
    const { host } = this;
    if (!host.hashFiles) return turn;
    const paths = turn.files.map((f) => f.path);
    const hashes = await withTimeout("file read", this.timeoutMs, (s) => host.hashFiles!(paths, s)).catch(() => ({}));
    return withDiskHashes(turn, hashes);
  }

  /** Our own messages among these, their claims settled; a claim the database cannot check now is not ours. */
  private async ours(sessionId: string, messages: SessionMessage[]): Promise<OwnMessageIds | undefined> {
    await this.own?.confirm(sessionId, messages).catch(() => undefined);
    return this.own;
  }

  private async agentList(): Promise<HostAgent[]> {
    const cached = this.agents;
    if (cached && this.monotonic() - cached.at < AGENT_CACHE_MS) return cached.list;
    const list = await withTimeout("agent list", this.timeoutMs, (s) => this.host.getAgents(s));
    this.agents = { list, at: this.monotonic() };
    return list;
  }
}
