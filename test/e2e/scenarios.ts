// What the scripted model does in each e2e scenario. The scenario's name is in the first user message.
import type { ModelReply, ModelRequest, ScriptContext } from "./support/scripted-model.js";
import { todowrite } from "./support/scripted-model.js";
import { HEADER, scenarioOf } from "./support/world.js";

const OPEN: Array<[string, string]> = [
  ["write the parser", "completed"],
  ["add the tests", "in_progress"],
  ["update the docs", "pending"],
];
const DONE: Array<[string, string]> = OPEN.map(([c]) => [c, "completed"]);
const HALF: Array<[string, string]> = [
  ["write the parser", "completed"],
  ["add the tests", "completed"],
  ["update the docs", "in_progress"],
];
const DROPPED: Array<[string, string]> = OPEN.map(([c, s]) => [c, s === "completed" ? s : "cancelled"]);

const continueLater = (args: Record<string, unknown>) => ({ name: "continue_later", args });
const toolResults = (request: ModelRequest) => request.messages.filter((m) => m.role === "tool").length;
/** How many continuations this request's conversation holds (1 for the first one). */
const continuations = (ctx: ScriptContext) => ctx.userTexts.filter((t) => t.includes(HEADER)).length;
/** Work that moves no todo: a shell command, as a model runs one. */
const work = {
  toolCalls: [{ name: "bash", args: { command: "echo working on it", description: "Work on the task" } }],
};
/** Scenarios whose refusing provider was fixed (a new API key): the test says when. */
const fixed = new Set<string>();
export const fixProvider = (scenario: string) => void fixed.add(scenario);
/** Scenarios whose provider is down for a while after their first continuation: until when. */
const outageUntil = new Map<string, number>();
/** Scenarios whose provider's limit is hit after the first turn's todos: until when it holds. */
const limitUntil = new Map<string, number>();
/** When each model request of the limit scenarios came (epoch ms): none may come while the limit holds. */
export const limitRequestTimes = new Map<string, number[]>();
const CHURN: Array<Array<[string, string]>> = [
  [
    ["write the parser", "completed"],
    ["add the tests", "pending"],
    ["update the docs", "in_progress"],
  ],
  [
    ["write the parser", "completed"],
    ["add the tests", "in_progress"],
    ["update the docs", "pending"],
  ],
];

export function script(request: ModelRequest, ctx: ScriptContext): ModelReply {
  const scenario = scenarioOf(request);
  const last = ctx.lastUserText ?? "";
  const continuation = last.includes(HEADER);
  const command = last.includes("[todo-continuation]");
  if (scenario === "limit-retry" || scenario === "limit-text") {
    limitRequestTimes.set(scenario, [...(limitRequestTimes.get(scenario) ?? []), Date.now()]);
    const limited = limitReply(scenario, ctx);
    if (limited) return limited;
  }
  if (ctx.afterTool) {
    // The turn after a tool call: end it, except where the scenario wants the model busy.
    if (scenario === "abort" && toolResults(request) === 1) return { text: "Thinking very hard…", delayMs: 15_000 };
    if (scenario === "question" && toolResults(request) === 1) {
      return {
        toolCalls: [
          {
            name: "question",
            args: {
              questions: [
                {
                  question: "Which database?",
                  header: "Database",
                  options: [
                    { label: "sqlite", description: "embedded" },
                    { label: "postgres", description: "server" },
                  ],
                },
              ],
            },
          },
        ],
      };
    }
    if (scenario === "text-question" && ctx.userTexts.length === 1) {
      return { text: "The parser is done. I can keep the cache in SQLite or in a JSON file.\n\nWhich do you prefer?" };
    }
    return { text: "I will stop here for now." };
  }
  if (command) return { text: "Understood." };
  switch (scenario) {
    case "basic":
    case "restart":
    case "expired":
    case "stop":
      return continuation ? { toolCalls: [todowrite(DONE)] } : { toolCalls: [todowrite(OPEN)] };
    case "complete":
      return { toolCalls: [todowrite(DONE)] };
    case "limit-retry":
    case "limit-text":
      return continuation ? { toolCalls: [todowrite(DONE)] } : { toolCalls: [todowrite(OPEN)] };
    case "later":
      // Waits for CI with the plugin's tool (the shortest park it takes), then finishes when continued.
      return continuation
        ? { toolCalls: [todowrite(DONE)] }
        : { toolCalls: [todowrite(OPEN), continueLater({ reason: "CI is running", minutes: 0.25 })] };
    case "later-person":
      // Parks for half an hour; the person writes meanwhile and the model closes the work for them.
      if (ctx.userTexts.length > 1) return { toolCalls: [todowrite(DONE)] };
      return { toolCalls: [todowrite(OPEN), continueLater({ reason: "the deploy", minutes: 30 })] };
    case "later-stop":
    case "tui-later":
      // Parks itself for half an hour: the person ends the wait with Esc.
      return continuation
        ? { toolCalls: [todowrite(DONE)] }
        : { toolCalls: [todowrite(OPEN), continueLater({ reason: "the deploy", minutes: 30 })] };
    case "later-check":
      // Waits for CI with a check the agent may run (a script in the project that passes on its third run).
      return continuation
        ? { toolCalls: [todowrite(DONE)] }
        : {
            toolCalls: [
              todowrite(OPEN),
              continueLater({ reason: "CI is running", minutes: 5, check: "sh ./check.sh", checkEveryMinutes: 0.25 }),
            ],
          };
    case "later-check-refused":
      // A check the person's rules would ask about first: refused, nothing run.
      return continuation
        ? { toolCalls: [todowrite(DONE)] }
        : {
            toolCalls: [
              todowrite(OPEN),
              continueLater({ reason: "the release", minutes: 5, check: "git push origin main" }),
            ],
          };
    case "later-refused":
      return continuation
        ? { toolCalls: [todowrite(DONE)] }
        : { toolCalls: [todowrite(OPEN), continueLater({ reason: "CI is running", at: "2020-01-01T00:00:00Z" })] };
    case "user-message":
      return last.includes("drop the rest") ? { toolCalls: [todowrite(DROPPED)] } : { toolCalls: [todowrite(OPEN)] };
    case "stagnation":
      // A model that answers every reminder with work (a command) and never moves a todo.
      return continuation ? work : { toolCalls: [todowrite(OPEN)] };
    case "text-only":
      // A model that answers the reminder with words only.
      return continuation ? { text: "All done! Everything is finished." } : { toolCalls: [todowrite(OPEN)] };
    case "churn":
      // A model that works on every reminder and toggles statuses back and forth while it does.
      return continuation
        ? { toolCalls: [...work.toolCalls, todowrite(CHURN[continuations(ctx) % 2]!)] }
        : { toolCalls: [todowrite(OPEN)] };
    case "takeover":
      if (last.startsWith("Stop.")) return { text: "Understood, I'll leave the parser alone." };
      if (!continuation) return { toolCalls: [todowrite(OPEN)] };
      return continuations(ctx) === 1 ? work : { toolCalls: [todowrite(DONE)] };
    case "text-question":
      if (continuation) return { toolCalls: [todowrite(DONE)] };
      if (ctx.userTexts.length > 1)
        return {
          toolCalls: [
            todowrite([
              ["write the parser", "completed"],
              ["add the tests", "completed"],
              ["update the docs", "pending"],
            ]),
          ],
        };
      return { toolCalls: [todowrite(OPEN)] };
    case "refused-then-fixed":
    case "tui-refused":
      // 401 to every continuation until the test fixes the provider; then the work completes.
      if (!continuation) return { toolCalls: [todowrite(OPEN)] };
      if (!fixed.has(scenario))
        return { status: 401, text: "Incorrect API key provided", errorType: "invalid_request_error" };
      return { toolCalls: [todowrite(DONE)] };
    case "transient":
    case "permanent": {
      if (!continuation) return { toolCalls: [todowrite(OPEN)] };
      if (scenario === "permanent")
        return { status: 401, text: "Incorrect API key provided", errorType: "invalid_request_error" };
      if (!outageUntil.has(scenario)) outageUntil.set(scenario, Date.now() + 2500);
      // OpenCode retries a 503 itself (5 times, honouring retry-after-ms), then reports the error and goes idle.
      if (Date.now() < outageUntil.get(scenario)!)
        return { status: 503, text: "The server is overloaded", headers: { "retry-after-ms": "50" } };
      return { toolCalls: [todowrite(DONE)] };
    }
    case "compaction":
      // The summary OpenCode asks for when compacting (no tools offered), else the usual stop with open todos.
      if (!request.tools?.length) return { text: "Summary: the parser is written; tests and docs remain." };
      return continuation ? { toolCalls: [todowrite(DONE)] } : { toolCalls: [todowrite(OPEN)] };
    case "tui-widths":
      // Each message from the person leaves todos open (moved on from the last time); a continuation finishes them.
      if (continuation) return { toolCalls: [todowrite(DONE)] };
      return { toolCalls: [todowrite(CHURN[ctx.userTexts.length % 2]!)] };
    case "tui-cost": {
      // Each turn reports what it used (the world gives the model a price): two continuations finish the work.
      const used = { prompt: 40_000, completion: 1_000 };
      if (!continuation) return { toolCalls: [todowrite(OPEN)], usage: { prompt: 20_000, completion: 500 } };
      if (continuations(ctx) === 1) return { toolCalls: [todowrite(HALF)], usage: used };
      return { toolCalls: [todowrite(DONE)], usage: used };
    }
    case "tui":
      // A person in the TUI: the first turn leaves todos open; later messages get words; a continuation finishes.
      if (continuation) return { toolCalls: [todowrite(DONE)] };
      return ctx.userTexts.length === 1 ? { toolCalls: [todowrite(OPEN)] } : { text: "Sure." };
    case "not-started":
    case "gp-parent":
      return continuation ? { toolCalls: [todowrite(DONE)] } : { toolCalls: [todowrite(OPEN)] };
    case "gp-grandchild":
      return { text: "Grandchild at work…", delayMs: 8000 };
    case "abort":
    case "question":
    case "parent":
      return continuation ? { toolCalls: [todowrite(DONE)] } : { toolCalls: [todowrite(OPEN)] };
    case "child":
      return { text: "Child at work…", delayMs: 12_000 };
    default:
      return { text: "ok" };
  }
}

/**
 * The provider's limit, hit by the call after the first turn's todowrite and held for a while: a 429 with
 * `retry-after: 40` that OpenCode waits out itself (`limit-retry`), or a 400 that names its reset only in its words,
 * which OpenCode does not retry (`limit-text`: none of the words OpenCode 1.18.33 retries on, such as "try again in"
 * or "rate limit"). Once it lifts, the scenario goes on as usual.
 */
function limitReply(scenario: string, ctx: ScriptContext): ModelReply | undefined {
  const until = limitUntil.get(scenario);
  if (until === undefined && !(ctx.afterTool && ctx.userTexts.length === 1)) return undefined;
  if (until !== undefined && Date.now() >= until) return undefined;
  if (scenario === "limit-retry") {
    const end = until ?? Date.now() + 40_000;
    limitUntil.set(scenario, end);
    const seconds = String(Math.ceil((end - Date.now()) / 1000));
    return {
      status: 429,
      text: "Rate limit reached for requests",
      errorType: "rate_limit_error",
      headers: { "retry-after": seconds },
    };
  }
  const end = until ?? Date.now() + 20_000;
  limitUntil.set(scenario, end);
  const seconds = Math.ceil((end - Date.now()) / 1000);
  return {
    status: 400,
    text: `You have reached your usage limit. It resets in ${seconds} seconds.`,
    errorType: "invalid_request_error",
  };
}
