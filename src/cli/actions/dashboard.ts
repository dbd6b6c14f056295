// `todo-continuation dashboard`: the page (src/dashboard) served alone for the database the command names, until
// Ctrl-C. It opens the database for writing, as `stop` does: the page's actions are the same changes.
import { resolveConfiguration } from "../../config/resolve.js";
import { refusalFor, TOKEN_VARIABLE } from "../../dashboard/access.js";
import { Dashboard } from "../../dashboard/server.js";
import { listenHttp, parseListen, type Listen } from "../../service/status-server.js";
import { DEFAULT_PAGE_LISTEN } from "../commands/dashboard.js";
import { databasePath, openForWriting, shownLocation } from "../database.js";
import { CliError, UsageError } from "../errors.js";
import { print, type GlobalOptions } from "../output.js";

export interface DashboardOptions {
  listen?: Listen;
  token?: string;
}

/** The token of the option, else of the environment; none when neither gives one. */
export function pageToken(option: string | undefined): string | undefined {
  const given = option ?? process.env[TOKEN_VARIABLE];
  return given && given.trim() !== "" ? given.trim() : undefined;
}

export async function dashboard(options: DashboardOptions, { db }: GlobalOptions): Promise<void> {
  const location = databasePath(db);
  const listen = options.listen ?? parseListen(DEFAULT_PAGE_LISTEN);
  const token = pageToken(options.token);
  const refusal = refusalFor(listen.host, token);
  if (refusal) throw new UsageError(refusal);
  const store = await openForWriting(location);
  const { merged } = resolveConfiguration({ env: process.env, files: true });
  let page: Dashboard;
  try {
    page = new Dashboard({
      store,
      database: shownLocation(location),
      token,
      dailyCap: merged.dailyContinuationCost,
      log: (message) => process.stderr.write(`todo-continuation dashboard: ${message}\n`),
    });
  } catch (error) {
    await store.close();
    throw new UsageError((error as Error).message);
  }
  const server = await listenHttp(listen, async (req, res) => {
    if (!(await page.handle(req, res))) res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  }).catch(async (error: NodeJS.ErrnoException) => {
    await store.close();
    throw new CliError(`cannot listen on ${listen.host}:${listen.port}: ${error.code ?? error.message}`);
  });
  print(
    `the page of ${shownLocation(location)}: ${server.url}/${token ? " (open it once with ?token=<your token>)" : ""}`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  page.close();
  await server.close();
  await store.close();
}
