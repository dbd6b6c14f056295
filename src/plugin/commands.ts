// The two slash commands users control the enforcer with inside OpenCode. OpenCode always sends a command's text to
// the model (only a throwing hook can prevent that, and that shows the user an error), so the hook sets or lifts the
// durable stop first and then rewrites the text into a short note the model acknowledges.
import { COMMAND_NOTE_PREFIX } from "../core/prompt.js";
import type { Enforcer } from "../engine/enforcer.js";

export const STOP_COMMAND = "stop-continuation";
export const RESUME_COMMAND = "resume-continuation";

export const COMMANDS: Record<string, { description: string; template: string }> = {
  [STOP_COMMAND]: {
    description: "Stop automatic todo continuation for this session (kept across restarts until /resume-continuation)",
    template: "Stop automatic todo continuation for this session.",
  },
  [RESUME_COMMAND]: {
    description: "Resume automatic todo continuation for this session",
    template: "Resume automatic todo continuation for this session.",
  },
};

/** Adds the commands to OpenCode's configuration unless the user defined commands of the same names. */
export function registerCommands(config: { command?: Record<string, unknown> }): void {
  config.command ??= {};
  for (const [name, command] of Object.entries(COMMANDS)) config.command[name] ??= command;
}

export function commandNote(command: string, changed: boolean): string | undefined {
  if (command === STOP_COMMAND) {
    return changed
      ? `${COMMAND_NOTE_PREFIX} Automatic todo continuation is now stopped for this session. It stays stopped, also after a restart, until /resume-continuation. Acknowledge in one short sentence and do not continue the todo list unless asked.`
      : `${COMMAND_NOTE_PREFIX} Automatic todo continuation was already stopped for this session. Acknowledge in one short sentence.`;
  }
  if (command === RESUME_COMMAND) {
    return changed
      ? `${COMMAND_NOTE_PREFIX} Automatic todo continuation is resumed for this session. Continue with the open todos.`
      : `${COMMAND_NOTE_PREFIX} Automatic todo continuation was not stopped for this session. Continue with the open todos.`;
  }
  return undefined;
}

/** What the model is told when the stop or resume could not be written (the database failing). */
export function failureNote(command: string): string {
  const what = command === STOP_COMMAND ? "stopped" : "resumed";
  return `${COMMAND_NOTE_PREFIX} Automatic todo continuation could not be ${what}: its database does not work right now (see OpenCode's log). Tell the user in one short sentence.`;
}

/** Applies one of our commands; resolves with the note to show the model, or undefined for anybody else's command. */
export async function runCommand(enforcer: Enforcer, command: string, sessionId: string): Promise<string | undefined> {
  if (command !== STOP_COMMAND && command !== RESUME_COMMAND) return undefined;
  try {
    const changed =
      command === STOP_COMMAND
        ? await enforcer.stop(sessionId, "command")
        : await enforcer.resume(sessionId, "command");
    return commandNote(command, changed);
  } catch {
    return failureNote(command);
  }
}
