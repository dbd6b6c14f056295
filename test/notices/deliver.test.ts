// What a delivery's failure means — another try later, or not until the configuration changes — and that no error
// text, whatever failed, holds a URL's path or query, a token or a secret.
import { afterEach, describe, expect, it } from "vitest";
import { NOTICE_KINDS } from "../../src/core/notices.js";
import { describeChannel } from "../../src/notices/channels.js";
import { deliverNotice } from "../../src/notices/deliver.js";
import { retryAfterMs } from "../../src/notices/http.js";
import type { Channel, DeliveryResult } from "../../src/notices/types.js";
import { closedPort, startReceiver, type Answer, type Receiver } from "../support/http-receiver.js";
import { sampleNotice } from "./sample-notice.js";

const SECRETS = ["secret-topic", "QUERYSECRET", "tk_TOKEN", "hmac-SECRET", "hdr-SECRET"];

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  receivers.length = 0;
});

/** Every kind of channel over HTTP, each pointed at `base` with secrets in its path, query, token and headers. */
function channelsAt(base: string, timeoutMs = 5000): Channel[] {
  const common = { kinds: [...NOTICE_KINDS], timeoutMs };
  const url = `${base}/secret-topic?auth=QUERYSECRET`;
  return [
    { ...common, type: "webhook", name: "w", url, secret: "hmac-SECRET", headers: { authorization: "hdr-SECRET" } },
    { ...common, type: "ntfy", name: "n", url, token: "tk_TOKEN" },
    { ...common, type: "slack", name: "s", url },
    { ...common, type: "discord", name: "d", url },
  ];
}

/** Every channel's delivery to a receiver answering `answer`, each checked free of secrets. */
async function deliveredTo(answer: Answer | "never", timeoutMs?: number): Promise<DeliveryResult[]> {
  const receiver = await startReceiver(() => answer);
  receivers.push(receiver);
  const results = await Promise.all(
    channelsAt(receiver.url("").replace(/\/$/, ""), timeoutMs).map((c) => deliverNotice(c, sampleNotice())),
  );
  for (const result of results) expectNoSecret(result);
  return results;
}

function expectNoSecret(result: DeliveryResult): void {
  const text = JSON.stringify(result);
  for (const secret of SECRETS) expect(text).not.toContain(secret);
}

describe("a delivery's failure", () => {
  it("is worth another try after a 500, naming the host and the answer", async () => {
    const results = await deliveredTo({ status: 500, body: "upstream down\nsecond line" });
    for (const result of results) {
      expect(result).toMatchObject({ ok: false, retryable: true });
      expect(result).not.toHaveProperty("retryAfterMs");
      expect((result as { error: string }).error).toMatch(/^127\.0\.0\.1:\d+ answered 500: upstream down$/);
    }
  });

  it("is not worth another try after a 404 or 400", async () => {
    for (const status of [404, 400, 403])
      for (const result of await deliveredTo({ status, body: "no_such_hook" }))
        expect(result).toMatchObject({ ok: false, retryable: false, error: expect.stringContaining(`${status}`) });
  });

  it("waits as a 429 or 503 asks: Retry-After in seconds or as a date, Discord's retry_after, at most an hour", async () => {
    for (const result of await deliveredTo({ status: 429, headers: { "retry-after": "7" } }))
      expect(result).toMatchObject({ ok: false, retryable: true, retryAfterMs: 7000 });
    for (const result of await deliveredTo({ status: 503, headers: { "retry-after": "86400" } }))
      expect(result).toMatchObject({ ok: false, retryable: true, retryAfterMs: 3_600_000 });
    const discord = '{"message": "You are being rate limited.", "retry_after": 1.5, "global": false}';
    for (const result of await deliveredTo({
      status: 429,
      body: discord,
      headers: { "content-type": "application/json" },
    }))
      expect(result).toMatchObject({ ok: false, retryable: true, retryAfterMs: 1500 });
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    expect(retryAfterMs(new Date(now + 90_000).toUTCString(), now)).toBe(90_000);
    expect(retryAfterMs("soon", now)).toBeUndefined();
  });

  it("is worth another try after 408, and a redirect is not followed", async () => {
    for (const result of await deliveredTo({ status: 408 })) expect(result).toMatchObject({ retryable: true });
    for (const result of await deliveredTo({ status: 301, headers: { location: "https://elsewhere.example/x" } }))
      expect(result).toMatchObject({ ok: false, retryable: false, error: expect.stringContaining("redirect") });
  });

  it("is worth another try when nothing listens", async () => {
    const port = await closedPort();
    for (const channel of channelsAt(`http://127.0.0.1:${port}`)) {
      const result = await deliverNotice(channel, sampleNotice());
      expectNoSecret(result);
      expect(result).toEqual({
        ok: false,
        retryable: true,
        error: `could not reach 127.0.0.1:${port}: ECONNREFUSED`,
      });
    }
  });

  it("is worth another try when the receiver never answers within the channel's timeout", async () => {
    for (const result of await deliveredTo("never", 300))
      expect(result).toMatchObject({
        ok: false,
        retryable: true,
        error: expect.stringMatching(/^no answer from 127\.0\.0\.1:\d+ within 300 ms$/),
      });
  });

  it("never shows a secret the receiver echoes back", async () => {
    const results = await deliveredTo({ status: 400, body: "bad request to /secret-topic?auth=QUERYSECRET" });
    for (const result of results) expect(result).toMatchObject({ ok: false, retryable: false });
  });
});

describe("describeChannel", () => {
  it("shows no secret of any channel", () => {
    for (const channel of channelsAt("https://user:pw@hooks.example.com")) {
      const line = describeChannel(channel);
      for (const secret of [...SECRETS, "user", "pw"]) expect(line).not.toContain(secret);
      expect(line).toBe(`${channel.type} hooks.example.com/…`);
    }
  });
});
