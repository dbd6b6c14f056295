import type { Command } from "commander";
import { afterExplicitResume } from "../../core/transitions.js";
import { Repository } from "../../store/repository.js";
import { databasePath, openForWriting, query } from "../database.js";
import { globals, print, printJson } from "../output.js";

/** The session's own scope when the database knows it; else the given or current directory. */
function scopeOf(repo: Repository, sessionId: string, directory: string | undefined) {
  return { sessionId, directory: repo.getSession(sessionId)?.directory ?? directory ?? process.cwd() };
}

export function registerStopResume(program: Command): void {
  program
    .command("stop")
    .description("set the durable stop on a session: no continuation (also after restarts) until resumed")
    .argument("<sessionID>", "the OpenCode session id (ses_…)")
    .option("--directory <dir>", "the project directory, for a session the database has not seen yet")
    .action(async (sessionId: string, options: { directory?: string }, command: Command) => {
      const { db, json } = globals(command);
      const store = await openForWriting(databasePath(db));
      try {
        const repo = new Repository(store);
        const { changed, cancelled } = query(() =>
          repo.setStop(scopeOf(repo, sessionId, options.directory), "cli", Date.now()),
        );
        if (json) return printJson({ sessionId, stopped: true, changed, cancelledCountdown: cancelled?.id ?? null });
        print(
          changed
            ? `stopped ${sessionId}${cancelled ? " (its armed countdown was cancelled)" : ""}; lift it with \`todo-continuation resume ${sessionId}\` or /resume-continuation`
            : `${sessionId} was already stopped`,
        );
      } finally {
        store.close();
      }
    });

  program
    .command("resume")
    .description("lift the durable stop or the pause of a session and start its loop protections over")
    .argument("<sessionID>", "the OpenCode session id (ses_…)")
    .action(async (sessionId: string, _options: unknown, command: Command) => {
      const { db, json } = globals(command);
      const store = await openForWriting(databasePath(db));
      try {
        const repo = new Repository(store);
        const now = Date.now();
        // recheck_at: a running enforcer of the session's directory looks at it within a lease tick (~5 s).
        const changed = query(() =>
          repo.resume(scopeOf(repo, sessionId, undefined), "cli", now, { ...afterExplicitResume(), recheckAt: now }),
        );
        if (json) return printJson({ sessionId, stopped: false, changed });
        print(
          changed
            ? `resumed ${sessionId}: a running enforcer looks at it again within seconds`
            : `${sessionId} was not stopped, paused or held back`,
        );
      } finally {
        store.close();
      }
    });
}
