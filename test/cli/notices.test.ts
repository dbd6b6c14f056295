// `todo-continuation notices` on a SQLite file whose notices the change scripts wrote and a sender settled: the table
// newest first with what was said or why it did not get through, the filters, every column in --json with the body as
// the webhook received it, and a clear line when there is nothing to show.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/open/open.js";
import type { OperatorStore } from "../../src/store/operator/operator.js";
import { cli, requireBuiltCli } from "../support/cli.js";
import { tempFolder } from "../support/temp-folders.js";
import { BUDGET_SESSION, OUTBOX_DIRECTORY, QUESTION_SESSION, writeOutbox, type Outbox } from "./notice-outbox.js";

let store: OperatorStore;
let db: string;
let outbox: Outbox;

beforeAll(async () => {
  requireBuiltCli();
  db = join(tempFolder(), "state.db");
  store = await openStore(db, { kind: "cli" });
  outbox = await writeOutbox(store);
});

afterAll(async () => {
  await store?.close();
});

const TIME = "\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d";
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("todo-continuation notices", () => {
  it("lists each channel's notice newest first: when, session, kind, channel, state, tries, sent or next, text or error", async () => {
    const { code, stdout } = await cli(["--db", db, "notices"]);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^WHEN\s+SESSION\s+KIND\s+CHANNEL\s+STATE\s+TRIES\s+SENT \/ NEXT\s+TEXT \/ LAST ERROR$/);
    expect(lines.slice(1)).toHaveLength(5);
    const row = (...cells: string[]) => new RegExp(`^${TIME}\\s+${cells.join("\\s+")}$`);
    expect(lines[1]).toMatch(
      row(QUESTION_SESSION, "question", "old", "pending", "0", "next in (59 min \\d+ s|1 h 0 min)", ".+"),
    );
    expect(lines[2]).toMatch(
      row(
        QUESTION_SESSION,
        "question",
        "hook",
        "pending",
        "1",
        "next in (1|2) min \\d+ s",
        "error: 503 from hooks\\.example\\.com",
      ),
    );
    expect(lines[3]).toMatch(
      row(BUDGET_SESSION, "budget", "phone", "failed", "1", "error: 404 from ntfy\\.example\\.com"),
    );
    expect(lines[4]).toMatch(row(BUDGET_SESSION, "budget", "old", "sent", "1", TIME, escaped(outbox.budgetText)));
    expect(lines[5]).toMatch(row(BUDGET_SESSION, "budget", "hook", "sent", "1", TIME, escaped(outbox.budgetText)));
  });

  it("--json gives every column, numbers as numbers, and the body parsed as the webhook received it", async () => {
    const { code, stdout } = await cli(["--db", db, "--json", "notices", "--session", BUDGET_SESSION]);
    expect(code).toBe(0);
    const rows = JSON.parse(stdout) as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.id)).toEqual(["ntc_budget:phone", "ntc_budget:old", "ntc_budget:hook"]);
    expect(Object.keys(rows[0]!).sort()).toEqual(
      [
        "id",
        "notice_id",
        "session_id",
        "directory",
        "server",
        "channel",
        "kind",
        "reason",
        "created_at",
        "body",
        "state",
        "attempts",
        "next_attempt_at",
        "owner",
        "lease_until",
        "sent_at",
        "last_error",
        "folded_into",
        "updated_at",
      ].sort(),
    );
    expect(rows[2]).toMatchObject({
      notice_id: "ntc_budget",
      session_id: BUDGET_SESSION,
      directory: OUTBOX_DIRECTORY,
      server: null,
      channel: "hook",
      kind: "budget",
      reason: "budget_exhausted",
      state: "sent",
      attempts: 1,
      sent_at: outbox.sentAt,
      last_error: null,
      owner: null,
      body: {
        id: "ntc_budget",
        kind: "budget",
        text: outbox.budgetText,
        session: { id: BUDGET_SESSION, title: "Fix the parser" },
        goOn: { command: `todo-continuation allow ${BUDGET_SESSION}` },
      },
    });
    expect(rows[0]).toMatchObject({ state: "failed", last_error: "404 from ntfy.example.com", sent_at: null });
    expect(typeof rows[0]!.created_at).toBe("number");
  });

  it("--state, --session and --limit narrow the list; a state that does not exist is refused with the nearest", async () => {
    const failed = JSON.parse((await cli(["--db", db, "--json", "notices", "--state", "failed"])).stdout);
    expect(failed.map((r: { id: string }) => r.id)).toEqual(["ntc_budget:phone"]);
    const pending = JSON.parse(
      (await cli(["--db", db, "--json", "notices", "--state", "pending", "--session", QUESTION_SESSION])).stdout,
    );
    expect(pending.map((r: { id: string }) => r.id)).toEqual(["ntc_question:old", "ntc_question:hook"]);
    const newest = JSON.parse((await cli(["--db", db, "--json", "notices", "--limit", "1"])).stdout);
    expect(newest.map((r: { id: string }) => r.id)).toEqual(["ntc_question:old"]);
    const typo = await cli(["--db", db, "notices", "--state", "sen"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("did you mean sent?");
    const none = await cli(["--db", db, "notices", "--session", "ses_nobody", "--state", "sent"]);
    expect(none).toMatchObject({ code: 0, stdout: "no notices match --session ses_nobody --state sent\n" });
  });

  it("a database without notices says so, and where channels are configured", async () => {
    const empty = join(tempFolder(), "empty.db");
    await (await openStore(empty, { kind: "cli" })).close();
    const { code, stdout } = await cli(["--db", empty, "notices"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^no notices yet: .*the notify option \(docs\/notifications\.md\)/);
    expect(JSON.parse((await cli(["--db", empty, "--json", "notices"])).stdout)).toEqual([]);
  });
});
