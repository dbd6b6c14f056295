// Each HTTP channel's request as a loopback receiver gets it, checked against the format its service documents:
// the generic webhook (the notice, its headers, its signature), ntfy's headers, Slack's blocks, Discord's embed and
// its limits.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NOTICE_KINDS, noticeLines, type Notice } from "../../src/core/notices.js";
import { deliverNotice } from "../../src/notices/deliver.js";
import { DISCORD_LIMITS, embedLength } from "../../src/notices/discord.js";
import { ntfyRequest } from "../../src/notices/ntfy.js";
import type { Channel } from "../../src/notices/types.js";
import { verifySignature } from "../../src/notices/webhook.js";
import { startReceiver, type Receiver } from "../support/http-receiver.js";
import { fullNotice, sampleNotice } from "./sample-notice.js";

let receiver: Receiver;
beforeEach(async () => {
  receiver = await startReceiver((request) =>
    request.path.startsWith("/slack") ? { status: 200, body: "ok" } : { status: 204 },
  );
});
afterEach(() => receiver.close());

const base = { kinds: [...NOTICE_KINDS], timeoutMs: 5000 };

async function delivered(channel: Channel, notice: Notice, now?: number) {
  const result = await deliverNotice(channel, notice, fetch, now);
  expect(result).toMatchObject({ ok: true });
  expect(receiver.requests).toHaveLength(1);
  return receiver.requests[0]!;
}

describe("the webhook channel", () => {
  it("POSTs the notice as JSON with its kind, id and time, signed over the timestamp and the raw body", async () => {
    const now = Date.UTC(2026, 10, 27, 9, 31, 0);
    const notice = fullNotice();
    const channel: Channel = {
      ...base,
      type: "webhook",
      name: "hook",
      url: receiver.url("/hook?k=1"),
      secret: "s3cret",
      headers: { Authorization: "Bearer abc" },
    };
    const got = await delivered(channel, notice, now);
    expect(got.method).toBe("POST");
    expect(got.path).toBe("/hook?k=1");
    expect(JSON.parse(got.body)).toEqual(notice);
    expect(got.headers).toMatchObject({
      "content-type": "application/json",
      authorization: "Bearer abc",
      "x-todo-continuation-event": "question",
      "x-todo-continuation-id": notice.id,
      "x-todo-continuation-timestamp": String(now / 1000),
    });
    expect(got.headers["x-todo-continuation-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifySignature("s3cret", got.headers, got.body, 300, now + 1000)).toBe(true);
  });

  it("sends no signature without a secret", async () => {
    const got = await delivered({ ...base, type: "webhook", name: "w", url: receiver.url() }, sampleNotice());
    expect(got.headers["x-todo-continuation-signature"]).toBeUndefined();
    expect(got.headers["x-todo-continuation-event"]).toBe("budget");
  });
});

describe("the ntfy channel", () => {
  it("publishes the lines as text with ntfy's title, priority, tags and bearer headers", async () => {
    const notice = sampleNotice("stuck");
    const channel: Channel = {
      ...base,
      type: "ntfy",
      name: "n",
      url: receiver.url("/my-topic"),
      token: "tk_abc",
      tags: ["robot"],
    };
    const got = await delivered(channel, notice);
    expect(got.path).toBe("/my-topic");
    expect(got.body).toBe(noticeLines(notice).join("\n"));
    expect(got.headers).toMatchObject({
      "content-type": "text/plain; charset=utf-8",
      "x-title": "my-project: stuck",
      "x-priority": "4",
      "x-tags": "warning,robot",
      authorization: "Bearer tk_abc",
    });
  });

  it("opens the session's page when tapped, where the notice links to one", async () => {
    const notice = sampleNotice("stuck");
    notice.session.url = "https://tc.example.test/session/ses_0123456789";
    const got = await delivered({ ...base, type: "ntfy", name: "n", url: receiver.url("/t") }, notice);
    expect(got.headers["x-click"]).toBe("https://tc.example.test/session/ses_0123456789");
    const plain = ntfyRequest({ ...base, type: "ntfy", name: "n", url: receiver.url("/t") }, sampleNotice("stuck"));
    expect(plain.headers).not.toHaveProperty("x-click");
  });

  it("gives done the default priority, a configured priority wins, and a non-ASCII title is RFC 2047 encoded", async () => {
    const notice = sampleNotice("done", { directory: "/home/you/café ☕" });
    const got = await delivered({ ...base, type: "ntfy", name: "n", url: receiver.url("/t") }, notice);
    expect(got.headers["x-priority"]).toBe("3");
    expect(got.headers["x-tags"]).toBe("white_check_mark");
    const title = /^=\?UTF-8\?B\?([A-Za-z0-9+/=]+)\?=$/.exec(String(got.headers["x-title"]));
    expect(Buffer.from(title![1]!, "base64").toString("utf8")).toBe("café ☕: done");
    receiver.requests.length = 0;
    const loud = await delivered({ ...base, type: "ntfy", name: "n", url: receiver.url("/t"), priority: 5 }, notice);
    expect(loud.headers["x-priority"]).toBe("5");
  });
});

describe("the slack channel", () => {
  it("sends text as the fallback and blocks: a header, the lines as a section, the way on as code in a context", async () => {
    const notice = sampleNotice("budget", { session: { id: "ses_1", title: "<!channel> & co" } });
    const got = await delivered({ ...base, type: "slack", name: "s", url: receiver.url("/slack/T/B/X") }, notice);
    expect(got.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(got.body) as { text: string; blocks: Array<Record<string, any>> };
    expect(Object.keys(body).sort()).toEqual(["blocks", "text"]);
    expect(body.text).toContain("my-project: budget spent");
    expect(body.blocks.map((b) => b.type)).toEqual(["header", "section", "context"]);
    expect(body.blocks[0]!.text).toEqual({ type: "plain_text", text: "my-project: budget spent", emoji: true });
    expect(body.blocks[1]!.text.type).toBe("mrkdwn");
    expect(body.blocks[1]!.text.text).toContain("&lt;!channel&gt; &amp; co");
    expect(body.blocks[1]!.text.text).not.toContain("<!channel>");
    expect(body.blocks[2]!.elements).toEqual([
      {
        type: "mrkdwn",
        text: "Go on: `todo-continuation allow ses_0123456789` (palette: Allow more todo continuations)",
      },
    ]);
  });

  it("keeps every text within Block Kit's limits", async () => {
    const long = "x".repeat(5000);
    const notice = sampleNotice("error", { directory: `/${long}`, text: long });
    const got = await delivered({ ...base, type: "slack", name: "s", url: receiver.url("/slack") }, notice);
    const body = JSON.parse(got.body) as { text: string; blocks: Array<Record<string, any>> };
    expect([...body.blocks[0]!.text.text].length).toBeLessThanOrEqual(150);
    expect([...body.blocks[1]!.text.text].length).toBeLessThanOrEqual(3000);
    expect([...body.text].length).toBeLessThanOrEqual(3000);
  });
});

describe("the discord channel", () => {
  it("sends one embed with the title, lines, way on, colour and time, and parses no mention", async () => {
    const notice = sampleNotice("error", { session: { id: "ses_1", title: "@everyone look" } });
    const got = await delivered(
      { ...base, type: "discord", name: "d", url: receiver.url("/api/webhooks/1/t") },
      notice,
    );
    const body = JSON.parse(got.body) as { embeds: Array<Record<string, any>>; allowed_mentions: unknown };
    expect(body.allowed_mentions).toEqual({ parse: [] });
    expect(body.embeds).toHaveLength(1);
    const embed = body.embeds[0]!;
    expect(embed.title).toBe("my-project: stopped by an error");
    expect(embed.description).toContain("@everyone look");
    expect(embed.color).toBe(0xe74c3c);
    expect(embed.timestamp).toBe(notice.at);
    expect(embed.fields).toEqual([
      { name: "Go on", value: "`todo-continuation resume ses_0123456789`\npalette: Resume todo continuation" },
    ]);
  });

  it("keeps the embed within Discord's limits however long the notice", async () => {
    const long = "y".repeat(3000);
    const notice = {
      ...sampleNotice("stuck", { directory: `/${"z".repeat(400)}`, text: long }),
      folded: Array.from({ length: 5 }, (_, i) => ({
        id: `n${i}`,
        kind: "stuck" as const,
        reason: "r",
        text: long,
        at: "",
      })),
    };
    const got = await delivered({ ...base, type: "discord", name: "d", url: receiver.url() }, notice);
    const embed = (JSON.parse(got.body) as { embeds: Array<Parameters<typeof embedLength>[0]> }).embeds[0]!;
    expect([...embed.title].length).toBeLessThanOrEqual(DISCORD_LIMITS.title);
    expect([...embed.description].length).toBeLessThanOrEqual(DISCORD_LIMITS.description);
    for (const field of embed.fields) expect([...field.value].length).toBeLessThanOrEqual(DISCORD_LIMITS.fieldValue);
    expect(embedLength(embed)).toBeLessThanOrEqual(DISCORD_LIMITS.total);
    expect(embed.description.endsWith("…")).toBe(true);
  });
});
