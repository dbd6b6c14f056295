// What the scripted model does in each e2e scenario. The scenario's name is in the first user message.
import type { ModelReply, ModelRequest, ScriptContext } from "./support/scripted-model.js";
import { todowrite } from "./support/scripted-model.js";
import { HEADER, scenarioOf } from "./support/harness.js";

const OPEN: Array<[string, string]> = [
  ["write the parser", "completed"],
  ["add the tests", "in_progress"],
  ["update the docs", "pending"],
];
const DONE: Array<[string, string]> = OPEN.map(([c]) => [c, "completed"]);
const DROPPED: Array<[string, string]> = OPEN.map(([c, s]) => [c, s === "completed" ? s : "cancelled"]);

const toolResults = (request: ModelRequest) => request.messages.filter((m) => m.role === "tool").length;

export function script(request: ModelRequest, ctx: ScriptContext): ModelReply {
  const scenario = scenarioOf(request);
  const last = ctx.lastUserText ?? "";
  const continuation = last.includes(HEADER);
  const command = last.includes("[todo-continuation]");
  if (ctx.afterTool) {
    // The turn after a tool call: end it, except where the scenario wants the model busy.
    if (scenario === "abort" && toolResults(request) === 1) return { text: "Thinking very hard…", delayMs: 15_000 };
    if (scenario === "question" && toolResults(request) === 1) {
      return { toolCalls: [{ name: "question", args: { questions: [{ question: "Which database?", header: "Database", options: [{ label: "sqlite", description: "embedded" }, { label: "postgres", description: "server" }] }] } }] };
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
    case "user-message":
      return last.includes("drop the rest") ? { toolCalls: [todowrite(DROPPED)] } : { toolCalls: [todowrite(OPEN)] };
    case "stagnation":
      // A model that answers every reminder with words and never touches its todos.
      return continuation ? { text: "Still working on it." } : { toolCalls: [todowrite(OPEN)] };
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
