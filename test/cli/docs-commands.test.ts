// The shell blocks the docs mark as runnable work today, from a clone, before the package is on the npm registry: each
// runs as written (the clone's placeholder path made this checkout's) and must exit 0 without a "not found" or a 404.
// A block is marked by the line `<!-- runnable in the clone -->` (run in the checkout) or `<!-- runnable in a
// project -->` (run in a fresh project folder whose database the plugin would have written) right above its ```sh fence.
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../crash/processes.js";
import { cli, requireBuiltCli } from "../support/cli.js";
import { tempFolder } from "../support/temp-folders.js";

const exec = promisify(execFile);

/** How the docs name the reader's clone; the test runs this checkout's build. */
const CLONE_PLACEHOLDER = "/abs/path/to/checkout";

interface RunnableBlock {
  page: string;
  where: "the clone" | "a project";
  script: string;
}

const PAGES = [
  "README.md",
  "CONTRIBUTING.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => join("docs", f)),
];

/** Every marked block of the pages, its fence's indentation (a block inside a list item) taken off. */
function runnableBlocks(): RunnableBlock[] {
  const marked = /^[ \t]*<!-- runnable in (the clone|a project) -->\s*?\n\s*^([ \t]*)```sh\n([\s\S]*?)^[ \t]*```/gm;
  return PAGES.flatMap((page) =>
    [...readFileSync(join(ROOT, page), "utf8").matchAll(marked)].map((m) => ({
      page,
      where: m[1] as RunnableBlock["where"],
      script: m[3]!
        .split("\n")
        .map((line) => (line.startsWith(m[2]!) ? line.slice(m[2]!.length) : line))
        .join("\n"),
    })),
  );
}

/** What a command that does not exist, or a package that is not published, answers. */
const NOT_THERE = /not found|E404|404 Not Found|ENOTCACHED|ERR_MODULE_NOT_FOUND|Cannot find (module|package)/i;

let home: string;
let project: string;
/** A home of its own (no real XDG folder read), npm kept off the network: a name npm would fetch fails here. */
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  requireBuiltCli();
  home = tempFolder("tc-docs-home-");
  project = tempFolder("tc-docs-project-");
  env = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, "config"),
    XDG_DATA_HOME: join(home, "data"),
    XDG_STATE_HOME: join(home, "state"),
    XDG_CACHE_HOME: join(home, "cache"),
    npm_config_cache: join(home, "npm-cache"),
    npm_config_offline: "true",
    npm_config_update_notifier: "false",
    npm_config_yes: "false",
    TODO_CONTINUATION_DB: "",
  };
  // The project's database as the plugin leaves it at its first start, at the default path.
  const migrated = await cli(["migrate"], env as Record<string, string>, project);
  expect(migrated.code, migrated.stderr).toBe(0);
});

describe("the docs' runnable shell blocks", () => {
  it("are found in the pages, of both kinds", () => {
    const found = runnableBlocks();
    expect(found.map((b) => b.where)).toEqual(expect.arrayContaining(["the clone", "a project"]));
  });

  it.each(runnableBlocks().map((b) => [`${b.page} (in ${b.where})`, b] as const))(
    "%s runs today from a clone",
    async (_name, block) => {
      const script = block.script.replaceAll(CLONE_PLACEHOLDER, ROOT);
      const run = await exec("bash", ["-e", "-c", script], {
        cwd: block.where === "the clone" ? ROOT : project,
        env,
        timeout: 60_000,
      }).then(
        ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
        (error: { code: number; stdout: string; stderr: string }) => ({
          code: error.code,
          output: error.stdout + error.stderr,
        }),
      );
      expect(run.code, `${script}\n${run.output}`).toBe(0);
      expect(run.output).not.toMatch(NOT_THERE);
    },
  );
});
