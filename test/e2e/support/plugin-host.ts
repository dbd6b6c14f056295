// The plugin hosted as OpenCode 1.18.33 hosts it, against a simulated OpenCode, in a Bun process (the opencode binary
// run with BUN_BE_BUN=1: the very Bun, bun:sqlite and SQL client the plugin has inside OpenCode) without OpenCode's
// start-up. Read from 1.18.33's bundle: the PluginInput is an SDK v1 client on the server's URL scoped to the project
// directory, with the project, directory, worktree, serverUrl and Bun's `$`; the `config` hook is awaited once at
// load with OpenCode's config; then every bus event of the instance's directory goes to every plugin's `event` hook
// synchronously, `{ event: { id, type, properties } }`, its returned promise dropped. The events come here from the
// sim's /event stream, which carries exactly those envelopes. It stays up until killed: SIGKILL is OpenCode killed.
// Env: SIM_URL, PROJECT, PLUGIN_OPTIONS (JSON). Prints {"ready":true,"pid":…} once it follows the stream.
import type { PluginInput } from "@opencode-ai/plugin";
import { createOpencodeClient } from "@opencode-ai/sdk";
import plugin from "../../../src/index.js";
import { STREAM_ONLY_EVENTS } from "../../support/sim-opencode/event-recorder.js";

const url = process.env.SIM_URL!;
const directory = process.env.PROJECT!;
const options = JSON.parse(process.env.PLUGIN_OPTIONS ?? "{}") as Record<string, unknown>;

const client = createOpencodeClient({ baseUrl: url, directory });
const input = {
  client,
  project: { id: "global", worktree: directory, vcs: undefined, time: { created: Date.now() } },
  directory,
  worktree: directory,
  serverUrl: new URL(url),
  $: Bun.$,
  experimental_workspace: { register: () => undefined },
} as unknown as PluginInput;

const hooks = await plugin(input, options);
// OpenCode's config as the hook sees it: this plugin in its list (what the announcer reads for other enforcers).
await hooks.config?.({ plugin: [new URL("../../../src/index.ts", import.meta.url).href] } as never);

const response = await fetch(`${url}/event?directory=${encodeURIComponent(directory)}`);
if (!response.ok || !response.body) throw new Error(`the event stream answered ${response.status}`);
let ready = false;
let buffer = "";
const decoder = new TextDecoder();
for await (const chunk of response.body) {
  buffer += decoder.decode(chunk, { stream: true });
  let end: number;
  while ((end = buffer.indexOf("\n\n")) >= 0) {
    const frame = buffer.slice(0, end);
    buffer = buffer.slice(end + 2);
    if (!frame.startsWith("data: ")) continue;
    const event = JSON.parse(frame.slice("data: ".length)) as { id: string; type: string; properties: unknown };
    if (!ready && event.type === "server.connected") {
      ready = true;
      process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
    }
    // Held to the real OpenCode by test/e2e/sim-opencode.test.ts ("hands its plugins' event hook …").
    if (STREAM_ONLY_EVENTS.has(event.type)) continue;
    try {
      void hooks.event?.({ event } as never);
    } catch (error) {
      // OpenCode prints a hook's throw and goes on with the next plugin and event.
      console.error("plugin event hook threw", error);
    }
  }
}
// The stream ended without this process being killed: nothing a test plans, so it is said loudly.
console.error("the simulated OpenCode's event stream ended");
process.exit(1);
