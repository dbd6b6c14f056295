// Discord: a webhook's message with one embed (discord.com/developers/docs, "Execute Webhook" and "Embed Limits"): the
// title, the notice's lines, the way on as a field, the kind's colour and the time of the stop, every text within
// Discord's limits; no mention is ever parsed (a session title holding "@everyone" pings nobody). Discord answers 204
// (200 with `?wait=true`), and a 429 with `retry_after` seconds in its JSON body as well as in `Retry-After`.
import { noticeLines, noticeTitle, type Notice, type NoticeKind } from "../core/notices.js";
import { post, type Post } from "./http.js";
import { clip } from "./text.js";
import type { DeliveryResult, DiscordChannel } from "./types.js";

/** Discord's embed limits, in characters. */
export const DISCORD_LIMITS = {
  title: 256,
  description: 4096,
  fieldName: 256,
  fieldValue: 1024,
  footer: 2048,
  total: 6000,
};

/**
 * The side bar's colour of each kind: blue asks, orange is money, yellow is stuck, green is done, red is an error, grey
 * waits.
 */
export const DISCORD_COLOR: Record<NoticeKind, number> = {
  question: 0x3498db,
  budget: 0xe67e22,
  stuck: 0xf1c40f,
  done: 0x2ecc71,
  error: 0xe74c3c,
  waiting: 0x95a5a6,
};

interface Embed {
  title: string;
  /** The title links to the session's page, where there is one. */
  url?: string;
  description: string;
  color: number;
  fields: Array<{ name: string; value: string; inline?: boolean }>;
  timestamp: string;
  footer: { text: string };
}

/** What counts toward the 6000 characters of a message's embeds. */
export function embedLength(embed: Embed): number {
  const texts = [embed.title, embed.description, embed.footer.text, ...embed.fields.flatMap((f) => [f.name, f.value])];
  return texts.reduce((sum, text) => sum + [...text].length, 0);
}

export function discordPayload(notice: Notice): {
  embeds: Embed[];
  allowed_mentions: { parse: never[] };
} {
  const palette = notice.goOn.palette.startsWith("(") ? "" : `\npalette: ${notice.goOn.palette}`;
  const wayOn = clip(`\`${notice.goOn.command.replace(/`/g, "'")}\`${palette}`, DISCORD_LIMITS.fieldValue);
  const embed: Embed = {
    title: clip(noticeTitle(notice), DISCORD_LIMITS.title),
    ...(notice.session.url ? { url: notice.session.url } : {}),
    description: "",
    color: DISCORD_COLOR[notice.kind],
    fields: [{ name: "Go on", value: wayOn }],
    timestamp: notice.at,
    footer: { text: clip(`todo-continuation · ${notice.kind} · ${notice.id}`, DISCORD_LIMITS.footer) },
  };
  const lines = noticeLines(notice).filter((line) => !line.startsWith("Go on: "));
  const room = Math.min(DISCORD_LIMITS.description, DISCORD_LIMITS.total - embedLength(embed));
  embed.description = clip(lines.join("\n"), room);
  return { embeds: [embed], allowed_mentions: { parse: [] } };
}

export function discordRequest(channel: DiscordChannel, notice: Notice): Post {
  return {
    url: channel.url,
    body: JSON.stringify(discordPayload(notice)),
    headers: { "content-type": "application/json" },
  };
}

export function deliverDiscord(
  channel: DiscordChannel,
  notice: Notice,
  fetchImpl?: typeof fetch,
): Promise<DeliveryResult> {
  return post(channel, discordRequest(channel, notice), fetchImpl);
}
