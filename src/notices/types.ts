// What a channel is once its configuration was checked, and what one delivery to it came to. Shared by the parser
// (channels.ts), each service's delivery and the sender that calls them.
import type { NoticeKind } from "../core/notices.js";

export const CHANNEL_TYPES = ["webhook", "ntfy", "slack", "discord", "command"] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

interface ChannelBase {
  /** Unique among the channels, stable across restarts: each delivery is stored under it. */
  name: string;
  /** The kinds of notice it receives. */
  kinds: NoticeKind[];
  /** How long one delivery may take, the answer's body included. */
  timeoutMs: number;
}

/** A JSON POST of the notice itself, signed when `secret` is set. */
export interface WebhookChannel extends ChannelBase {
  type: "webhook";
  url: string;
  secret?: string;
  headers?: Record<string, string>;
}

/** A message published to an ntfy topic (`url` is the topic's URL). */
export interface NtfyChannel extends ChannelBase {
  type: "ntfy";
  url: string;
  /** An access token, sent as a bearer. */
  token?: string;
  /** 1 (min) to 5 (max); without it, each kind's own. */
  priority?: number;
  /** Added to each kind's own tag. */
  tags?: string[];
}

/** A Slack incoming webhook. */
export interface SlackChannel extends ChannelBase {
  type: "slack";
  url: string;
}

/** A Discord webhook. */
export interface DiscordChannel extends ChannelBase {
  type: "discord";
  url: string;
}

/** A program run with the notice as JSON on its stdin (no shell). */
export interface CommandChannel extends ChannelBase {
  type: "command";
  /** A name found on PATH, or an absolute path. */
  command: string;
  args?: string[];
}

export type Channel = WebhookChannel | NtfyChannel | SlackChannel | DiscordChannel | CommandChannel;

/**
 * One delivery's outcome. `retryable`: the same notice may succeed later (the receiver was down, busy or slow);
 * otherwise the channel refused it and will again until its configuration changes. Never carries a secret.
 */
export type DeliveryResult =
  { ok: true; status?: number } | { ok: false; retryable: boolean; retryAfterMs?: number; error: string };
