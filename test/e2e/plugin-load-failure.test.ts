// Where OpenCode 1.18.33 says that a server plugin did not load, as docs/troubleshooting.md and doctor's WARN tell a
// person to look: a spec it cannot find or import is a `session.error` event (which its TUI shows as an error toast)
// and no line of its log, even at DEBUG; only a plugin function that throws is logged, as "failed to load plugin".
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../crash/processes.js";
import { tempFolder } from "../support/temp-folders.js";
import { waitFor } from "../support/wait-for.js";
import { OpenCodeServer } from "./support/opencode-server.js";

const root = tempFolder("tc-plugin-load-");
const plugins = join(root, "plugins");
const spec = (name: string) => pathToFileURL(join(plugins, name)).href;
const MISSING = spec("misspelt.js");
const THROWS_AT_IMPORT = spec("throws-at-import.js");
const THROWS_IN_INIT = spec("throws-in-init.js");

let server: OpenCodeServer;
const events: Array<{ directory?: string; payload: { type: string; properties: Record<string, unknown> } }> = [];
const stream = new AbortController();

beforeAll(async () => {
  mkdirSync(plugins, { recursive: true });
  writeFileSync(join(plugins, "throws-at-import.js"), 'throw new Error("broken at import");\n');
  writeFileSync(
    join(plugins, "throws-in-init.js"),
    'export const Broken = async () => { throw new Error("broken in init"); };\n',
  );
  server = new OpenCodeServer({
    root,
    modelUrl: "http://127.0.0.1:9/v1",
    pluginOptions: false,
    logLevel: "DEBUG",
    config: { plugin: [MISSING, THROWS_AT_IMPORT, THROWS_IN_INIT] },
  });
  await server.start();
  // The start's warm-up loaded the project's plugins before anything listened: a second folder loads them again.
  const response = await fetch(`${server.url}/global/event`, { signal: stream.signal });
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of response.body! as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      const lines = buffer.split("\n");
      buffer = lines.pop()!;
      for (const line of lines) if (line.startsWith("data: ")) events.push(JSON.parse(line.slice(6)));
    }
  })().catch(() => undefined);
}, 60_000);

afterAll(async () => {
  stream.abort();
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe("a server plugin that does not load", () => {
  it("cannot be found or imported: an error event the TUI toasts, nothing in the log; throwing in init: the log", async () => {
    const other = join(root, "other-project");
    mkdirSync(other, { recursive: true });
    const answer = await fetch(`${server.url}/session?directory=${encodeURIComponent(other)}`);
    expect(answer.status).toBe(200);
    const failures = () =>
      events
        .filter((e) => e.directory === other && e.payload.type === "session.error")
        .map((e) => e.payload.properties as { sessionID?: string; error: { name: string; data: { message: string } } });
    await waitFor("two session.error events for the plugins that did not load", () => failures().length >= 2, {
      timeoutMs: 30_000,
      report: () => JSON.stringify(events.slice(-5)),
    });
    // OpenCode loads the plugins at once: their errors come in either order.
    const byMessage = (a: unknown[], b: unknown[]) => String(a[2]).localeCompare(String(b[2]));
    expect(
      failures()
        .map((f) => [f.sessionID, f.error.name, f.error.data.message])
        .sort(byMessage),
    ).toEqual([
      [undefined, "UnknownError", expect.stringMatching(`^Failed to load plugin ${MISSING}: Cannot find module`)],
      [undefined, "UnknownError", `Failed to load plugin ${THROWS_AT_IMPORT}: broken at import`],
    ]);
    await waitFor("the log line of the plugin whose function threw", () =>
      server.output().includes(`message="failed to load plugin" path=${THROWS_IN_INIT} error="broken in init"`),
    );
    const log = server.output();
    expect(log).toMatch(/level=ERROR .*message="failed to load plugin" path=/);
    expect(log).not.toContain(MISSING);
    expect(log).not.toContain(THROWS_AT_IMPORT);
  });

  it("is described in docs/troubleshooting.md with OpenCode's own words", () => {
    const page = readFileSync(join(ROOT, "docs", "troubleshooting.md"), "utf8").replace(/\s+/g, " ");
    expect(page).toContain("Failed to load plugin file:///…/index.js: Cannot find module");
    expect(page).toContain('message="failed to load plugin" path=file:///…/index.js error="…"');
  });
});
