// The webhook's signature as a receiver checks it: the secret's HMAC over the timestamp and the raw body, fresh.
import { describe, expect, it } from "vitest";
import { NOTICE_KINDS } from "../../src/core/notices.js";
import { signatureOf, verifySignature, webhookRequest } from "../../src/notices/webhook.js";
import { sampleNotice } from "./sample-notice.js";

const NOW = Date.UTC(2026, 10, 27, 10, 0, 0);
const channel = {
  type: "webhook" as const,
  name: "w",
  url: "https://hooks.example.com/x",
  secret: "whsec_test",
  kinds: [...NOTICE_KINDS],
  timeoutMs: 1000,
};

describe("the webhook signature", () => {
  it("is sha256= and the hex HMAC-SHA256 of <timestamp>.<body>", () => {
    // Computed independently: printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac key
    const expected = "sha256=a438e398bfafc57e4396bb7fc2304422f0f768e965d073ca313cb52e22e6ad03";
    expect(signatureOf("key", 1700000000, '{"a":1}')).toBe(expected);
    expect(signatureOf("key", "1700000000", Buffer.from('{"a":1}'))).toBe(expected);
  });

  it("verifies a request as sent, within the tolerance", () => {
    const request = webhookRequest(channel, sampleNotice(), NOW);
    expect(verifySignature("whsec_test", request.headers, request.body, 300, NOW + 299_000)).toBe(true);
    expect(verifySignature("whsec_test", new Headers(request.headers), Buffer.from(request.body), 300, NOW)).toBe(true);
  });

  it("fails with a changed body, another secret, an old or future timestamp, or a header missing", () => {
    const request = webhookRequest(channel, sampleNotice(), NOW);
    const changed = request.body.replace('"budget"', '"done"');
    expect(changed).not.toBe(request.body);
    expect(verifySignature("whsec_test", request.headers, changed, 300, NOW)).toBe(false);
    expect(verifySignature("other", request.headers, request.body, 300, NOW)).toBe(false);
    expect(verifySignature("whsec_test", request.headers, request.body, 300, NOW + 301_000)).toBe(false);
    expect(verifySignature("whsec_test", request.headers, request.body, 300, NOW - 301_000)).toBe(false);
    const { ["x-todo-continuation-signature"]: _, ...unsigned } = request.headers;
    expect(verifySignature("whsec_test", unsigned, request.body, 300, NOW)).toBe(false);
  });

  it("fails when an old request's timestamp is replaced to look fresh", () => {
    const old = webhookRequest(channel, sampleNotice(), NOW - 3_600_000);
    const replayed = { ...old.headers, "x-todo-continuation-timestamp": String(NOW / 1000) };
    expect(verifySignature("whsec_test", replayed, old.body, 300, NOW)).toBe(false);
  });
});
