// `todo-continuation servers add|list|remove`, what they do: the roster of a fleet's OpenCode servers (PostgreSQL).
import type { OperatorStore } from "../../store/operator/operator.js";
import { ServerExistsError, type ServerRoster } from "../../store/operator/roster.js";
import { isPostgresUrl } from "../../store/open/location.js";
import { databasePath, openForReading, openForWriting, query } from "../database.js";
import { CliError, UsageError } from "../errors.js";
import { duration, localTime, table } from "../format.js";
import { print, printJson, snakeCased, type GlobalOptions } from "../output.js";

export interface AddServerOptions {
  url: string;
  directory: string;
  name?: string;
  username?: string;
  passwordEnv?: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,99}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const NEEDS_POSTGRES =
  "servers are followed by a fleet that shares a PostgreSQL database: pass --db postgres://… (or set TODO_CONTINUATION_DB)";

function rosterOf(store: OperatorStore): ServerRoster {
  if (!store.roster) throw new UsageError(NEEDS_POSTGRES);
  return store.roster;
}

/** A SQLite file has no roster: a usage error (exit 2), said before anything is opened or created. */
async function withRoster<T>(db: string | undefined, write: boolean, work: (roster: ServerRoster) => Promise<T>) {
  const location = databasePath(db);
  if (!isPostgresUrl(location)) throw new UsageError(NEEDS_POSTGRES);
  const store = write ? await openForWriting(location) : await openForReading(location);
  try {
    return await query(() => work(rosterOf(store)));
  } finally {
    await store.close();
  }
}

/** The URL as stored: no credentials in it, ever. */
function serverUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--url must be a URL such as http://10.0.0.7:4096, got "${text}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new UsageError(`--url must be an http:// or https:// URL, got "${text}"`);
  if (url.password)
    throw new UsageError(
      "passwords are never stored: drop it from --url and name the environment variable that holds it with --password-env",
    );
  return url;
}

export async function addServer(options: AddServerOptions, { db, json }: GlobalOptions): Promise<void> {
  const url = serverUrl(options.url);
  const name = options.name ?? url.host;
  if (!NAME.test(name))
    throw new UsageError(
      `--name must be 1-100 letters, digits or . _ : @ / - (starting with a letter or digit), got "${name}"`,
    );
  if (options.passwordEnv !== undefined && !ENV_NAME.test(options.passwordEnv))
    throw new UsageError(`--password-env takes an environment variable's name, got "${options.passwordEnv}"`);
  if (options.directory.trim() === "") throw new UsageError("--directory must not be empty");
  const username = options.username ?? (url.username ? decodeURIComponent(url.username) : undefined);
  url.username = "";
  const row = await withRoster(db, true, async (roster) => {
    try {
      return await roster.add({
        name,
        url: url.toString().replace(/\/$/, ""),
        directory: options.directory,
        username,
        passwordEnv: options.passwordEnv,
      });
    } catch (error) {
      if (error instanceof ServerExistsError) throw new CliError(error.message);
      throw error;
    }
  });
  if (json) return printJson(snakeCased(row));
  print(`added ${row.name}: ${row.url} (${row.directory}); a fleet replica takes it over within a round`);
}

export async function listServers(_options: object, { db, json }: GlobalOptions): Promise<void> {
  const rows = await withRoster(db, false, (roster) => roster.list());
  if (json) return printJson(snakeCased(rows));
  if (rows.length === 0) return print("no servers listed (add one with `todo-continuation servers add`)");
  print(
    table(
      [
        { header: "NAME", value: (r: (typeof rows)[number]) => r.name },
        { header: "URL", value: (r) => r.url },
        { header: "DIRECTORY", value: (r) => r.directory, max: 40 },
        {
          header: "FOLLOWED BY",
          value: (r) => (r.followed ? r.owner! : r.owner ? `${r.owner} (lapsed)` : "nobody"),
        },
        { header: "STREAM", value: (r) => (r.seenAgoMs === null ? "never" : `${duration(r.seenAgoMs)} ago`) },
        { header: "PASSWORD", value: (r) => (r.passwordEnv ? `$${r.passwordEnv}` : "") },
        { header: "ADDED", value: (r) => localTime(r.addedAt) },
      ],
      rows,
    ),
  );
}

export async function removeServer(name: string, _options: object, { db, json }: GlobalOptions): Promise<void> {
  const removed = await withRoster(db, true, (roster) => roster.remove(name));
  if (json) return printJson(snakeCased({ name, removed }));
  if (!removed) throw new CliError(`no server named "${name}" (see \`todo-continuation servers list\`)`);
  print(`removed ${name}; its follower lets it go within a round`);
}
