// The real plugin function on a PostgreSQL URL nothing answers at, in whichever runtime runs this file (OpenCode's
// Bun in plugin-database.test.ts): prints its log lines as one JSON line once it has paused.
import { TodoContinuation } from "../../../src/plugin/plugin.js";
import { ev } from "../../support/events.js";
import { FakeHost } from "../../support/fake-host.js";
import { fakeSdkClient } from "../../support/fake-sdk-client.js";

const host = new FakeHost();
host.setTodos("ses_1", [["a", "pending"]]);
const hooks = await TodoContinuation(
  {
    client: fakeSdkClient(host),
    directory: process.cwd(),
    worktree: process.cwd(),
    project: { id: "p" },
    serverUrl: new URL("http://x"),
    $: undefined,
  } as never,
  { databasePath: process.env.DATABASE_URL, toast: false, storeProbeMs: 100 },
);
(hooks.event as unknown as (input: { event: unknown }) => void)({ event: ev.idle("ses_1") });
const started = Date.now();
while (!host.logs.some((l) => l.message.includes("paused")) && Date.now() - started < 20_000)
  await new Promise((resolve) => setTimeout(resolve, 50));
process.stdout.write(`${JSON.stringify({ runtime: process.versions.bun ? "bun" : "node", logs: host.logs })}\n`);
await hooks.dispose();
process.exit(0);
