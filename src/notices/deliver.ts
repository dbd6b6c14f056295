// One notice to one channel, whichever service it is: the one entry the sender calls. Never throws — a delivery's
// failure is an outcome the sender records and retries or gives up on, never an exception that ends its loop.
import type { Notice } from "../core/notices.js";
import { deliverCommand } from "./command.js";
import { deliverDiscord } from "./discord.js";
import { deliverNtfy } from "./ntfy.js";
import { redact } from "./redact.js";
import { deliverSlack } from "./slack.js";
import type { Channel, DeliveryResult } from "./types.js";
import { deliverWebhook } from "./webhook.js";

function byType(channel: Channel, notice: Notice, fetchImpl: typeof fetch, now: number): Promise<DeliveryResult> {
  switch (channel.type) {
    case "webhook":
      return deliverWebhook(channel, notice, fetchImpl, now);
    case "ntfy":
      return deliverNtfy(channel, notice, fetchImpl);
    case "slack":
      return deliverSlack(channel, notice, fetchImpl);
    case "discord":
      return deliverDiscord(channel, notice, fetchImpl);
    case "command":
      return deliverCommand(channel, notice);
  }
}

/**
 * Deliver `notice` to `channel`. `now`: when the webhook's signature says it was sent (a retry is signed afresh).
 * Whether the channel takes the notice's kind is the caller's to ask (`channel.kinds`).
 */
export async function deliverNotice(
  channel: Channel,
  notice: Notice,
  fetchImpl: typeof fetch = fetch,
  now: number = Date.now(),
): Promise<DeliveryResult> {
  try {
    return await byType(channel, notice, fetchImpl, now);
  } catch (error) {
    // Not expected (each delivery catches its own), but a sender's loop must never die of one notice.
    const why = redact(error instanceof Error ? error.message : String(error), channel);
    return { ok: false, retryable: true, error: `${channel.type} delivery failed: ${why}` };
  }
}
