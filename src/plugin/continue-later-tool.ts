// The `continue_later` tool the plugin gives the agent (OpenCode's plugin `tool` hook): the agent that must wait (CI
// running, a deploy rolling out, a review due) parks its session until a time, or until a check passes, instead of
// polling with tokens or stopping. The tool answers at once; a call that cannot be honoured is a tool error the model
// reads and can act on, never a silent park. The rules are the engine's (SessionApi.continueLater); this is only the
// tool's shape and words.
import type { ToolDefinition } from "@opencode-ai/plugin";
import { zod } from "../config/zod.js";
import { duration } from "../core/words.js";
import type { ContinueLaterAnswer } from "../engine/session-api.js";

export const CONTINUE_LATER = "continue_later";

const DESCRIPTION = [
  "Wait without spending a turn: park this session until a time, then it is continued automatically (a normal",
  "countdown the person can cancel). Use it when the next step has to wait for something outside (CI running, a",
  "deploy, a review due later) instead of polling or stopping. Give `reason` and either `minutes` from now or `at`",
  "(an ISO 8601 time); with `check`, the session is continued as soon as that command exits 0 (at the latest at the",
  "time given). End your turn after calling it. A message from the person, /stop-continuation or",
  "`todo-continuation unpark` ends the wait early.",
].join(" ");

/** The tool over `continueLater` (the engine's). */
export function continueLaterTool(
  continueLater: (sessionId: string, args: unknown, agent: string) => Promise<ContinueLaterAnswer>,
): ToolDefinition {
  const z = zod();
  return {
    description: DESCRIPTION,
    args: {
      reason: z.string().describe("What the session waits for, in a sentence (shown to the person)."),
      minutes: z.number().optional().describe("Minutes from now (fractions allowed, at least 0.25)."),
      at: z.string().optional().describe("When to continue, as an ISO 8601 time such as 2026-12-07T15:04:00Z."),
      check: z
        .string()
        .optional()
        .describe(
          "A shell command whose exit status 0 means the wait is over (run in the project, polled); it is run only if you may run it without asking.",
        ),
      checkEveryMinutes: z
        .number()
        .optional()
        .describe("How often to run `check`, in minutes (at least 0.25; 1 if left out); the first run is at once."),
    },
    async execute(args, context) {
      const answer = await continueLater(context.sessionID, args, context.agent);
      if (!answer.parked) throw new Error(`continue_later refused: ${answer.error}`);
      const at = new Date(answer.until).toISOString().replace(/\.\d{3}Z$/, "Z");
      const when =
        typeof (args as { check?: unknown }).check === "string" ? "once the check passes, at the latest then" : "then";
      return (
        `Parked until ${at} (in ${duration(answer.until - Date.now())}): the session will be continued ${when}. ` +
        "End your turn now; nothing of yours runs meanwhile."
      );
    },
  } as ToolDefinition;
}
