import type { Command } from "commander";
import { examples } from "../output.js";
import { listenArg } from "./serve.js";

/** Where the page listens unless told: this machine only, at a port that stays the same for bookmarks and links. */
export const DEFAULT_PAGE_LISTEN = "127.0.0.1:7357";

export function dashboardCommand(command: Command): Command {
  return command
    .addHelpText(
      "after",
      examples(
        "todo-continuation dashboard",
        'todo-continuation dashboard --db postgres://tc@db.internal/tc --listen 0.0.0.0:7357 --token "$(openssl rand -hex 16)"',
      ),
    )
    .description(
      "serve a live page of every session the database knows (its state, decisions, continuations and their bills, " +
        "notices), with stop, resume, allow and wake; prints its URL",
    )
    .option(
      "--listen <[host]:port>",
      `where to serve it (default ${DEFAULT_PAGE_LISTEN}); any address but loopback needs --token`,
      listenArg,
    )
    .option(
      "--token <token>",
      "the access token every request must carry (default: $TODO_CONTINUATION_DASHBOARD_TOKEN); 16 characters or more",
    );
}
