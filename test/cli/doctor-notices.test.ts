// `doctor`'s notifications: each channel the project configures (in a file, or in the plugin options the real plugin
// said at its start) with its type and host, its kinds, its last success and last error and what is pending or failed,
// the channels only the database knows, each wrong channel once — and never a URL's path or query, a token, a signing
// secret or a header's value, in the table, the options or --json.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TodoContinuation } from "../../src/plugin/plugin.js";
import { openStore } from "../../src/store/open/open.js";
import { cli, requireBuiltCli } from "../support/cli.js";
import { FakeHost } from "../support/fake-host.js";
import { fakeSdkClient } from "../support/fake-sdk-client.js";
import { projectFolder } from "../support/project-folder.js";
import { tempFolder } from "../support/temp-folders.js";
import { writeOutbox, type Outbox } from "./notice-outbox.js";

const SECRETS = {
  path: "p-SECRET-PATH-1f9",
  query: "SECRET-QUERY-77a",
  signing: "SECRET-SIGNING-e41",
  header: "SECRET-HEADER-0bd",
  topic: "topic-SECRET-TOPIC-5c2",
  token: "tk_SECRET-TOKEN-93e",
  fromEnv: "SECRET-FROM-ENV-d18",
};
/** The variable a channel's header is read from: its name is shown, its value never. */
const HEADER_VARIABLE = "TC_DOCTOR_TEST_AUTH";

/** `hook` (every kind) and `phone` (budgets) with every kind of secret, and a third channel that is wrong. */
const CHANNELS = [
  {
    type: "webhook",
    name: "hook",
    url: `https://hooks.example.com/${SECRETS.path}?key=${SECRETS.query}`,
    secret: SECRETS.signing,
    headers: { Authorization: `Bearer ${SECRETS.header}`, "X-Other": { env: HEADER_VARIABLE } },
  },
  {
    type: "ntfy",
    name: "phone",
    url: `https://ntfy.example.com/${SECRETS.topic}`,
    token: SECRETS.token,
    kinds: ["budget"],
  },
  { type: "ntfy", url: "ftp://ntfy.example.com/elsewhere" },
];

let db: string;
let outbox: Outbox;

beforeAll(async () => {
  requireBuiltCli();
  process.env[HEADER_VARIABLE] = SECRETS.fromEnv;
  db = join(tempFolder(), "state.db");
  const store = await openStore(db, { kind: "cli" });
  try {
    outbox = await writeOutbox(store);
  } finally {
    await store.close();
  }
});

afterAll(() => {
  delete process.env[HEADER_VARIABLE];
});

/** Doctor's table and its --json, each checked for every secret. */
async function doctor(directory: string): Promise<{ stdout: string; json: Record<string, any> }> {
  const human = await cli(["--db", db, "doctor", "--directory", directory]);
  const json = await cli(["--db", db, "--json", "doctor", "--directory", directory]);
  for (const [what, secret] of Object.entries(SECRETS)) {
    expect(human.stdout + human.stderr, `the ${what} secret in doctor`).not.toContain(secret);
    expect(json.stdout + json.stderr, `the ${what} secret in doctor --json`).not.toContain(secret);
  }
  return { stdout: human.stdout, json: JSON.parse(json.stdout) as Record<string, any> };
}

const TIME = "\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d";

describe("doctor's notifications", () => {
  it("lists each configured channel and the ones only the database knows, with last success, last error and counts", async () => {
    const file = projectFolder({ notify: CHANNELS });
    const { stdout, json } = await doctor(file);
    const config = join(file, ".opencode", "todo-continuation.json");
    expect(stdout).toContain(`OK    notifications  2 channel(s) from ${config}: hook, phone`);
    expect(stdout).toMatch(
      /WARN\s+notify\s+left out: notify\[2\] \(ntfy\): url = "ftp:\/\/ntfy\.example\.com\/…"; allowed: an http:\/\/ or https:\/\/ URL/,
    );
    // hook's last try failed after its last success; phone never got one through.
    expect(stdout).toMatch(
      new RegExp(
        `WARN\\s+notifications\\s+hook: its last delivery failed \\(${TIME}: 503 from hooks\\.example\\.com\\)`,
      ),
    );
    expect(stdout).toMatch(/WARN\s+notifications\s+phone: its last delivery failed \(.*404 from ntfy\.example\.com\)/);
    const section = stdout.slice(stdout.indexOf("Notifications (each channel's deliveries):"));
    const lines = section.trimEnd().split("\n");
    expect(lines[1]).toMatch(/^CHANNEL\s+WHERE\s+KINDS\s+LAST SENT\s+LAST ERROR\s+PENDING\s+FAILED$/);
    expect(lines[2]).toMatch(
      new RegExp(
        `^hook\\s+webhook hooks\\.example\\.com/…\\s+default\\s+${TIME}\\s+${TIME} 503 from hooks\\.example\\.com\\s+1\\s+0$`,
      ),
    );
    expect(lines[3]).toMatch(
      new RegExp(
        `^phone\\s+ntfy ntfy\\.example\\.com/…\\s+budget\\s+never\\s+${TIME} 404 from ntfy\\.example\\.com\\s+0\\s+1$`,
      ),
    );
    expect(lines[4]).toMatch(new RegExp(`^old\\s+\\(not configured here\\)\\s+${TIME}\\s+1\\s+0$`));
    expect(json.notifications.source).toBe(config);
    expect(json.notifications.problems).toEqual([expect.stringMatching(/^notify\[2\] \(ntfy\): url = /)]);
    expect(json.notifications.channels).toEqual([
      {
        channel: "hook",
        describes: "webhook hooks.example.com/…",
        kinds: ["question", "budget", "stuck", "done", "error"],
        pending: 1,
        sent: 1,
        failed: 0,
        folded: 0,
        last_sent_at: outbox.sentAt,
        last_error: "503 from hooks.example.com",
        last_error_at: outbox.hookFailedAt,
      },
      expect.objectContaining({
        channel: "phone",
        describes: "ntfy ntfy.example.com/…",
        last_sent_at: null,
        last_error_at: outbox.phoneFailedAt,
        failed: 1,
      }),
      expect.objectContaining({ channel: "old", describes: null, kinds: null, last_sent_at: outbox.sentAt }),
    ]);
  });

  it("the plugin options' channels, as the plugin said at its start: its notify option shown without secrets", async () => {
    const directory = projectFolder();
    const host = new FakeHost();
    const input = { client: fakeSdkClient(host), directory, worktree: directory, project: { id: "p" } };
    const options = { toast: false, databasePath: join(directory, "state", "plugin.db"), notify: CHANNELS };
    const hooks = await TodoContinuation(input as never, options);
    await hooks.dispose();
    const { stdout, json } = await doctor(directory);
    expect(stdout).toContain("OK    notifications  2 channel(s) from the plugin options: hook, phone");
    expect(stdout).toMatch(/^hook\s+webhook hooks\.example\.com\/…\s+default\s/m);
    // The plugin said the wrong channel at its start: doctor says it once.
    expect(stdout.match(/notify\[2\]/g)).toHaveLength(1);
    expect(stdout).toMatch(/WARN\s+plugin\s+a notify channel is left out: notify\[2\] \(ntfy\)/);
    expect(stdout).toMatch(
      /^notify\s+\[\{"type":"webhook","name":"hook","url":"https:\/\/hooks\.examp…\s+plugin options$/m,
    );
    const shown = json.plugin.status.options.notify;
    expect(shown.source).toBe("plugin options");
    // toMatchObject: --json also prints each camelCase key in snake_case beside it.
    expect(shown.value[0]).toMatchObject({
      type: "webhook",
      name: "hook",
      url: "https://hooks.example.com/…",
      secret: "(hidden)",
      headers: { Authorization: "(hidden)", "X-Other": { env: HEADER_VARIABLE } },
    });
    expect(shown.value[1]).toMatchObject({ url: "https://ntfy.example.com/…", token: "(hidden)", kinds: ["budget"] });
  });

  it("no channel configured: notifications are off, and where to configure them; the database's channels still listed", async () => {
    const { stdout, json } = await doctor(projectFolder());
    expect(stdout).toMatch(
      /OK\s+notifications\s+off: no channel configured \(the notify option in \.opencode\/todo-continuation\.jsonc, the user.s todo-continuation\.jsonc .*docs\/notifications\.md\)/,
    );
    expect(stdout).toMatch(/^hook\s+\(not configured here\)\s/m);
    expect(json.notifications).toMatchObject({ source: "default", problems: [] });
    expect(json.notifications.channels.map((c: { channel: string }) => c.channel)).toEqual(["hook", "old", "phone"]);
  });

  it("without a database, the configured channels' problems and the off line are still said", async () => {
    const missing = join(tempFolder(), "none.db");
    const run = await cli(["--db", missing, "doctor", "--directory", projectFolder({ notify: [CHANNELS[2]] })]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/WARN\s+notify\s+left out: notify\[0\] \(ntfy\): url = "ftp:/);
    expect(run.stdout).toMatch(/FAIL\s+database\s+no database at /);
  });
});
