// What one call of the CLI loads: every call is a process of its own, so what it imports before the command runs is
// paid on every call. A command loads its own code and the database it opens, nothing of the other commands.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cli, requireBuiltCli } from "../support/cli.js";
import { tempFolder } from "../support/temp-folders.js";

/**
 * Loaded into the CLI with --import: a resolve hook (it runs on the loader's thread) that appends every file the
 * process resolves to $TC_LOADED, one URL a line, before it is loaded.
 */
const HOOKS = `
import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.startsWith("file:")) appendFileSync(process.env.TC_LOADED, resolved.url + "\\n");
  return resolved;
}`;
const RECORDER = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`;
const IMPORT_RECORDER = `--import=data:text/javascript,${encodeURIComponent(RECORDER)}`;

let folder: string;
let db: string;
let runs = 0;

/** The files a call of the CLI loaded, as paths inside the package or its node_modules ("node_modules/pg/…"). */
async function loadedBy(args: string[], code = 0): Promise<string[]> {
  const list = join(folder, `loaded-${++runs}.txt`);
  const run = await cli(args, { NODE_OPTIONS: IMPORT_RECORDER, TC_LOADED: list });
  expect(run.code, run.stderr).toBe(code);
  return readFileSync(list, "utf8")
    .trim()
    .split("\n")
    .map((url) => url.replace(/^.*?\/(dist|node_modules)\//, "$1/"));
}

const matching = (loaded: string[], patterns: RegExp[]) => loaded.filter((path) => patterns.some((p) => p.test(path)));

/** What only a command that opens a database, runs the enforcer or serves metrics needs. */
const HEAVY = [
  /^node_modules\/(drizzle-orm|better-sqlite3|pg|zod|prom-client|@opencode-ai\/sdk)\//,
  /^dist\/(store\/(sqlite|pg)|engine|host)\//,
  /^dist\/cli\/actions\//,
];

beforeAll(async () => {
  requireBuiltCli();
  folder = tempFolder("tc-cli-startup-");
  db = join(folder, "tc.db");
  expect((await cli(["--db", db, "migrate"])).code).toBe(0);
});

describe("what a call of the CLI loads", () => {
  it.each(["--version", "--help", "history --help"])(
    "%s loads no database, no driver and no command's code",
    async (call) => {
      const loaded = await loadedBy(call.split(" "));
      expect(loaded).toContain("dist/cli/main.js");
      expect(matching(loaded, HEAVY)).toEqual([]);
    },
  );

  it("history on a SQLite file loads SQLite and its own code: not PostgreSQL, the engine, the service or another command", async () => {
    const loaded = await loadedBy(["--db", db, "history"]);
    expect(loaded).toContain("dist/cli/actions/history.js");
    expect(loaded).toContain("dist/store/sqlite/sqlite-store.js");
    expect(loaded.some((path) => path.startsWith("node_modules/better-sqlite3/"))).toBe(true);
    expect(
      matching(loaded, [
        /^node_modules\/(pg|prom-client|@opencode-ai\/sdk)\//,
        /^dist\/store\/pg\/(open|pg-store|pools|schema)\.js$/,
        /^dist\/(engine|host|plugin)\//,
        /^dist\/service\/(standalone|fleet|metrics)\.js$/,
        /^dist\/cli\/actions\/(?!history\.js$)/,
      ]),
    ).toEqual([]);
  });

  it("serve with a wrong argument says so without loading the service, the engine or prom-client", async () => {
    const loaded = await loadedBy(["--db", db, "serve", "--url", "http://127.0.0.1:4096", "--silence-timeout", "5"], 2);
    expect(loaded).toContain("dist/cli/actions/serve.js");
    expect(
      matching(loaded, [
        /^node_modules\/(prom-client|@opencode-ai\/sdk)\//,
        /^dist\/(engine|host)\//,
        /^dist\/service\/(standalone|fleet|metrics)\.js$/,
      ]),
    ).toEqual([]);
  });
});
