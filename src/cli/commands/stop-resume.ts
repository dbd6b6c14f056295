import type { Command } from "commander";
import { liftedWords } from "../../core/explain.js";
import { resume } from "../../store/changes/resume.js";
import { stop } from "../../store/changes/stop.js";
import type { EngineStore } from "../../store/port.js";
import { q } from "../../store/script.js";
import { withStore } from "../database.js";
import { globals, print, printJson } from "../output.js";

/** The session's own scope when the database knows it; else the given or current directory. */
async function scopeOf(store: EngineStore, sessionId: string, directory: string | undefined) {
  const known = await store.read(q.session(sessionId));
  return { sessionId, directory: known?.directory ?? directory ?? process.cwd(), server: known?.server ?? null };
}

export function registerStopResume(program: Command): void {
  program
    .command("stop")
    .description("set the durable stop on a session: no continuation (also after restarts) until resumed")
    .argument("<sessionID>", "the OpenCode session id (ses_…)")
    .option("--directory <dir>", "the project directory, for a session the database has not seen yet")
    .action(async (sessionId: string, options: { directory?: string }, command: Command) => {
      const { db, json } = globals(command);
      const { changed, cancelled } = await withStore(db, async (store) =>
        store.change(stop(await scopeOf(store, sessionId, options.directory), "cli", Date.now())),
      );
      if (json) return printJson({ sessionId, stopped: true, changed, cancelledCountdown: cancelled?.id ?? null });
      print(
        changed
          ? `stopped ${sessionId}${cancelled ? " (its armed countdown was cancelled)" : ""}; lift it with \`todo-continuation resume ${sessionId}\` or /resume-continuation`
          : `${sessionId} was already stopped`,
      );
    });

  program
    .command("resume")
    .description("lift the durable stop or the pause of a session and start its loop protections over")
    .argument("<sessionID>", "the OpenCode session id (ses_…)")
    .action(async (sessionId: string, _options: unknown, command: Command) => {
      const { db, json } = globals(command);
      // A running enforcer of the session's directory looks at it within a lease tick (~5 s): see changes/resume.ts.
      const { changed, lifted } = await withStore(db, async (store) =>
        store.change(resume(await scopeOf(store, sessionId, undefined), "cli", Date.now())),
      );
      if (json) return printJson({ sessionId, stopped: false, changed, lifted });
      const what = liftedWords(lifted);
      print(
        changed
          ? `resumed ${sessionId}: ${what ? `lifted ${what}` : "its loop protections start over"}; a running enforcer looks at it again within seconds`
          : `${sessionId} was not stopped, paused or held back`,
      );
    });
}
