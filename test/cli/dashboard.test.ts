// `todo-continuation dashboard` as a person runs it: it refuses an address other machines reach without an access
// token (and a token too short to be one), and otherwise serves the page of the database it names, printing the URL.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open/open.js";
import { changeSession } from "../../src/store/changes/change-session.js";
import { CLI_BIN, cli, requireBuiltCli } from "../support/cli.js";
import { tempFolder } from "../support/temp-folders.js";
import { waitFor } from "../support/wait-for.js";

let db: string;

beforeAll(async () => {
  requireBuiltCli();
  db = join(tempFolder(), "page.db");
  const store = await openStore(db);
  await store.change(
    changeSession({ sessionId: "ses_cli_page", directory: "/work/project" }, Date.now(), {
      title: "A <b>bold</b> title",
    }),
  );
  await store.close();
});

describe("todo-continuation dashboard", () => {
  it("refuses an address other machines reach without an access token, and says how to give one", async () => {
    const run = await cli(["--db", db, "dashboard", "--listen", "0.0.0.0:0"], {
      TODO_CONTINUATION_DASHBOARD_TOKEN: "",
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("no access token");
    expect(run.stderr).toContain("--token or TODO_CONTINUATION_DASHBOARD_TOKEN");
  });

  it("refuses a token too short to be one", async () => {
    const run = await cli(["--db", db, "dashboard", "--listen", "0.0.0.0:0", "--token", "secret"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("the access token is too short (6 characters)");
  });

  let child: ReturnType<typeof spawn> | undefined;
  afterAll(() => void child?.kill("SIGTERM"));

  it("serves the page of the database it names on loopback, and prints its URL", async () => {
    child = spawn(process.execPath, [CLI_BIN, "--db", db, "dashboard", "--listen", "127.0.0.1:0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const url = await waitFor("the URL printed", () => /(http:\/\/127\.0\.0\.1:\d+)\//.exec(out)?.[1]);
    expect(out).toContain(`the page of ${db}: ${url}/`);
    const page = await (await fetch(`${url}/`)).text();
    expect(page).toContain("A &lt;b&gt;bold&lt;/b&gt; title");
    const exited = new Promise((resolve) => child!.once("exit", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
