// ntfy: the notice's lines as the message, published by POST to the topic's URL, with its title, priority and tags as
// ntfy's headers (docs.ntfy.sh/publish). The `X-` names are ntfy's own aliases, read first: a bare `Priority` is also
// HTTP's RFC 9218 header, which proxies such as Cloudflare add and ntfy then ignores.
import { noticeLines, noticeTitle, type Notice, type NoticeKind } from "../core/notices.js";
import { post, type Post } from "./http.js";
import type { DeliveryResult, NtfyChannel } from "./types.js";

/**
 * How urgent each kind is on a phone (1 min … 5 max): all but `done` and `waiting` need the person, so ring (4, high);
 * a wait needs nobody (2, low).
 */
export const NTFY_PRIORITY: Record<NoticeKind, number> = {
  question: 4,
  budget: 4,
  stuck: 4,
  error: 4,
  done: 3,
  waiting: 2,
};

/** Each kind's tag: ntfy shows a tag that is an emoji short code as the emoji, before the title. */
export const NTFY_TAG: Record<NoticeKind, string> = {
  question: "question",
  budget: "moneybag",
  stuck: "warning",
  done: "white_check_mark",
  error: "rotating_light",
  waiting: "hourglass_flowing_sand",
};

/**
 * ntfy keeps a message of up to 4096 bytes as text (a longer one becomes an attachment); the folded notices of a busy
 * hour could pass that, so the message is cut at a character's edge below it.
 */
const MESSAGE_BYTES = 4000;

function cut(text: string, bytes: number): string {
  if (Buffer.byteLength(text) <= bytes) return text;
  let out = "";
  for (const char of text) {
    if (Buffer.byteLength(out + char) > bytes - 3) break;
    out += char;
  }
  return `${out}…`;
}

/**
 * A header value as HTTP carries it: ASCII as it is; anything else as an RFC 2047 encoded word, which ntfy decodes
 * (docs.ntfy.sh/publish: "=?UTF-8?B?…?=" for a title with emoji or accents) — raw UTF-8 in a header is not HTTP and
 * fetch refuses what Latin-1 cannot hold.
 */
export function headerText(text: string): string {
  const oneLine = text.replace(/[\r\n]+/g, " ");
  if (/^[\x20-\x7e]*$/.test(oneLine)) return oneLine;
  return `=?UTF-8?B?${Buffer.from(oneLine, "utf8").toString("base64")}?=`;
}

export function ntfyRequest(channel: NtfyChannel, notice: Notice): Post {
  const tags = [NTFY_TAG[notice.kind], ...(channel.tags ?? [])];
  return {
    url: channel.url,
    body: cut(noticeLines(notice).join("\n"), MESSAGE_BYTES),
    headers: {
      "content-type": "text/plain; charset=utf-8",
      "x-title": headerText(noticeTitle(notice)),
      "x-priority": String(channel.priority ?? NTFY_PRIORITY[notice.kind]),
      "x-tags": headerText(tags.join(",")),
      // Tapping the notification opens the session's page.
      ...(notice.session.url ? { "x-click": notice.session.url } : {}),
      ...(channel.token ? { authorization: `Bearer ${channel.token}` } : {}),
    },
  };
}

export function deliverNtfy(channel: NtfyChannel, notice: Notice, fetchImpl?: typeof fetch): Promise<DeliveryResult> {
  return post(channel, ntfyRequest(channel, notice), fetchImpl);
}
