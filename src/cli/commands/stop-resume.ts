import type { Command } from "commander";
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
        const { changed, cancelled } = query(() => repo.setStop(scopeOf(repo, sessionId, options.directory), "cli", Date.now()));
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
    .description("lift the durable stop of a session")
    .argument("<sessionID>", "the OpenCode session id (ses_…)")
    .action(async (sessionId: string, _options: unknown, command: Command) => {
      const { db, json } = globals(command);
      const store = await openForWriting(databasePath(db));
      try {
        const repo = new Repository(store);
        const changed = query(() => repo.liftStop(scopeOf(repo, sessionId, undefined), "cli", Date.now()));
        if (json) return printJson({ sessionId, stopped: false, changed });
        print(changed ? `resumed ${sessionId}: it is continued again at its next idle` : `${sessionId} was not stopped`);
      } finally {
        store.close();
      }
    });
}
