// Slack: an incoming webhook's message (docs.slack.dev, "Sending messages using incoming webhooks"): `text`, the
// fallback a phone's notification shows, and Block Kit `blocks` — a header with the title, a section with the notice's
// lines, a context with the way on as code. Slack answers 200 `ok`.
import { noticeLines, noticeTitle, type Notice } from "../core/notices.js";
import { post, type Post } from "./http.js";
import { clip } from "./text.js";
import type { DeliveryResult, SlackChannel } from "./types.js";

/** Block Kit's limits: a header's plain text, and a section's or context element's text. */
export const SLACK_HEADER_MAX = 150;
export const SLACK_TEXT_MAX = 3000;

/** Slack's mrkdwn reads `<…>` as links and mentions (`<!channel>` pings everyone) and `&` as an entity. */
const escaped = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Backticks would close the code span the command is shown in. */
const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;

const isWayOn = (line: string) => line.startsWith("Go on: ");

export function slackPayload(notice: Notice): { text: string; blocks: object[] } {
  const title = noticeTitle(notice);
  const lines = noticeLines(notice);
  const palette = notice.goOn.palette.startsWith("(") ? "" : ` (palette: ${escaped(notice.goOn.palette)})`;
  return {
    text: clip(escaped([title, ...lines].join("\n")), SLACK_TEXT_MAX),
    blocks: [
      { type: "header", text: { type: "plain_text", text: clip(title, SLACK_HEADER_MAX), emoji: true } },
      {
        type: "section",
        text: { type: "mrkdwn", text: clip(escaped(lines.filter((l) => !isWayOn(l)).join("\n")), SLACK_TEXT_MAX) },
      },
      {
        type: "context",
        elements: [
          { type: "mrkdwn", text: clip(`Go on: ${code(escaped(notice.goOn.command))}${palette}`, SLACK_TEXT_MAX) },
        ],
      },
    ],
  };
}

export function slackRequest(channel: SlackChannel, notice: Notice): Post {
  return {
    url: channel.url,
    body: JSON.stringify(slackPayload(notice)),
    headers: { "content-type": "application/json" },
  };
}

export function deliverSlack(channel: SlackChannel, notice: Notice, fetchImpl?: typeof fetch): Promise<DeliveryResult> {
  return post(channel, slackRequest(channel, notice), fetchImpl);
}
