// The generic webhook: the notice itself as JSON, with headers that name it, and — with a `secret` — a signature a
// receiver checks before trusting it. Signed like Stripe's and GitHub's webhooks: an HMAC-SHA256 of
// "<timestamp>.<raw body>", so that a receiver verifies both the body and its freshness (a captured request replayed an
// hour later fails), with the timestamp in its own header.
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Notice } from "../core/notices.js";
import { post, type Post } from "./http.js";
import type { DeliveryResult, WebhookChannel } from "./types.js";

export const SIGNATURE_HEADER = "x-todo-continuation-signature";
export const TIMESTAMP_HEADER = "x-todo-continuation-timestamp";
export const EVENT_HEADER = "x-todo-continuation-event";
export const ID_HEADER = "x-todo-continuation-id";

/** The signature header's value: `sha256=` and the hex HMAC-SHA256 of `<timestamp>.<body>` keyed with the secret. */
export function signatureOf(secret: string, timestamp: number | string, body: string | Buffer): string {
  const hmac = createHmac("sha256", secret);
  hmac.update(`${timestamp}.`);
  hmac.update(body);
  return `sha256=${hmac.digest("hex")}`;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : bag[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Whether a request's signature is the secret's over its raw body, and its timestamp within `toleranceSec` of now.
 * `headers`: Node's `req.headers` or a fetch `Headers`; `body`: the raw bytes as received (not re-serialized JSON).
 */
export function verifySignature(
  secret: string,
  headers: HeaderBag,
  body: string | Buffer,
  toleranceSec = 300,
  now = Date.now(),
): boolean {
  const timestamp = header(headers, TIMESTAMP_HEADER)?.trim();
  const signature = header(headers, SIGNATURE_HEADER)?.trim();
  if (!timestamp || !signature || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(now / 1000 - Number(timestamp)) > toleranceSec) return false;
  const expected = Buffer.from(signatureOf(secret, timestamp, body));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The request a webhook delivery makes, signed at `now` (each retry is signed afresh, so it is never stale). */
export function webhookRequest(channel: WebhookChannel, notice: Notice, now = Date.now()): Post {
  const body = JSON.stringify(notice);
  const timestamp = Math.floor(now / 1000);
  return {
    url: channel.url,
    body,
    headers: {
      ...channel.headers,
      "content-type": "application/json",
      [EVENT_HEADER]: notice.kind,
      [ID_HEADER]: notice.id,
      [TIMESTAMP_HEADER]: String(timestamp),
      ...(channel.secret ? { [SIGNATURE_HEADER]: signatureOf(channel.secret, timestamp, body) } : {}),
    },
  };
}

export function deliverWebhook(
  channel: WebhookChannel,
  notice: Notice,
  fetchImpl?: typeof fetch,
  now = Date.now(),
): Promise<DeliveryResult> {
  return post(channel, webhookRequest(channel, notice, now), fetchImpl);
}
