// Every provider shape of docs/research/provider-limits.md §2, read as the park will read it: the error OpenCode
// keeps on a failed turn (message, statusCode, responseHeaders, responseBody), and what it says of the limit.
import { describe, expect, it } from "vitest";
import { readLimit, type LimitEvidence, type LimitReading } from "../../../src/core/limits/read-limit.js";

/** 2026-12-07 12:00:00 UTC. */
const NOW = Date.UTC(2026, 11, 7, 12, 0, 0);
const at = (iso: string) => Date.parse(iso);
const seconds = (s: number) => NOW + s * 1000;
const read = (evidence: LimitEvidence, localZone = "UTC") => readLimit(evidence, NOW, { localZone });

interface Row {
  shape: string;
  evidence: LimitEvidence;
  expected: LimitReading;
}

const rows: Row[] = [
  {
    shape: "Anthropic API rate limit: 429 with retry-after (seconds)",
    evidence: {
      statusCode: 429,
      message: "Too Many Requests: This request would exceed the rate limit for your organization",
      headers: {
        "retry-after": "40",
        "anthropic-ratelimit-requests-reset": "2026-12-07T12:00:10Z",
        "anthropic-ratelimit-requests-remaining": "0",
      },
      body: '{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit"}}',
    },
    expected: { kind: "lifts_at", at: seconds(40), source: { field: "retry-after" } },
  },
  {
    shape: "Anthropic API rate limit without retry-after: the spent window's RFC 3339 reset",
    evidence: {
      statusCode: 429,
      headers: {
        "anthropic-ratelimit-requests-reset": "2026-12-07T12:00:10Z",
        "anthropic-ratelimit-requests-remaining": "3",
        "anthropic-ratelimit-tokens-reset": "2026-12-07T12:00:50Z",
        "anthropic-ratelimit-tokens-remaining": "0",
        "anthropic-ratelimit-input-tokens-reset": "2026-12-07T12:00:20Z",
        "anthropic-ratelimit-input-tokens-remaining": "0",
      },
    },
    expected: {
      kind: "lifts_at",
      at: at("2026-12-07T12:00:50Z"),
      source: { field: "anthropic-ratelimit-tokens-reset" },
    },
  },
  {
    shape: "Anthropic API monthly spend cap: 429, a date in the message, no retry-after",
    evidence: {
      statusCode: 429,
      body: JSON.stringify({
        type: "error",
        error: {
          type: "rate_limit_error",
          message:
            "You have reached your API usage limits: your organization has crossed its monthly API usage threshold, set based on your organization's API tier. You will regain access on 2027-01-01 at 00:00 UTC.",
          details: { error_code: "enforced_spend_limit_reached" },
        },
      }),
    },
    expected: { kind: "lifts_at", at: at("2027-01-01T00:00:00Z"), source: { text: "2027-01-01 at 00:00 UTC" } },
  },
  {
    shape: "Anthropic overloaded: 529 with retry-after is no limit (OpenCode retries it; an error after is transient)",
    evidence: { statusCode: 529, message: "Overloaded", headers: { "retry-after": "30" } },
    expected: { kind: "not_a_limit" },
  },
  {
    shape: "Claude subscription: 429 with retry-after of a drained 5 h window",
    evidence: {
      statusCode: 429,
      headers: {
        "retry-after": "7999",
        "anthropic-ratelimit-unified-status": "rejected",
        "anthropic-ratelimit-unified-reset": String(NOW / 1000 + 8000),
      },
      body: '{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account\'s rate limit. Please try again later."}}',
    },
    expected: { kind: "lifts_at", at: seconds(7999), source: { field: "retry-after" } },
  },
  {
    shape: "Claude subscription without retry-after: the unified window's reset (epoch seconds)",
    evidence: {
      statusCode: 429,
      headers: {
        "anthropic-ratelimit-unified-status": "rejected",
        "anthropic-ratelimit-unified-reset": String(NOW / 1000 + 8000),
      },
    },
    expected: { kind: "lifts_at", at: seconds(8000), source: { field: "anthropic-ratelimit-unified-reset" } },
  },
  {
    shape: "OpenAI API rate limit: x-ratelimit-reset-* as Go durations, the spent one",
    evidence: {
      statusCode: 429,
      headers: {
        "x-ratelimit-reset-requests": "120ms",
        "x-ratelimit-remaining-requests": "42",
        "x-ratelimit-reset-tokens": "6m0s",
        "x-ratelimit-remaining-tokens": "0",
      },
      body: '{"error":{"type":"tokens","code":"rate_limit_exceeded","message":"Rate limit reached for o4-mini on tokens per min (TPM): Limit 200000, Used 158833, Requested 62431. Please try again in 6.379s."}}',
    },
    expected: { kind: "lifts_at", at: seconds(360), source: { field: "x-ratelimit-reset-tokens" } },
  },
  {
    shape: "OpenAI API rate limit known only by its text: try again in 6.379s",
    evidence: {
      statusCode: 429,
      message:
        "Rate limit reached for o4-mini in organization org-1 on tokens per min (TPM): Limit 200000, Used 158833, Requested 62431. Please try again in 6.379s.",
    },
    expected: { kind: "lifts_at", at: NOW + 6379, source: { text: "try again in 6.379s" } },
  },
  {
    shape: "OpenAI quota: 429 insufficient_quota is billing",
    evidence: {
      statusCode: 429,
      body: '{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":null}}',
    },
    expected: { kind: "billing", why: "insufficient_quota" },
  },
  {
    shape: "OpenAI quota through OpenCode's stream error: its own message, the code in the body",
    evidence: {
      message: "Quota exceeded. Check your plan and billing details.",
      body: '{"type":"error","error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}',
    },
    expected: { kind: "billing", why: "Quota exceeded. Check your plan and billing details" },
  },
  {
    shape: "OpenAI quota in OpenCode's words alone (no body kept)",
    evidence: { message: "Quota exceeded. Check your plan and billing details." },
    expected: { kind: "billing", why: "Quota exceeded. Check your plan and billing details" },
  },
  {
    shape: "OpenAI spend limit code",
    evidence: {
      statusCode: 429,
      body: '{"error":{"message":"Budget reached","type":"insufficient_quota","code":"project_spend_limit_exceeded"}}',
    },
    expected: { kind: "billing", why: "insufficient_quota" },
  },
  {
    shape: "ChatGPT plan (Codex): usage_limit_reached with resets_at in the body",
    evidence: {
      statusCode: 429,
      headers: { "x-codex-primary-used-percent": "100", "x-codex-primary-reset-at": String(NOW / 1000 + 13873) },
      body: JSON.stringify({
        error: {
          type: "usage_limit_reached",
          message: "The usage limit has been reached",
          plan_type: "plus",
          resets_at: NOW / 1000 + 13872,
          resets_in_seconds: 13872,
        },
      }),
    },
    expected: { kind: "lifts_at", at: seconds(13873), source: { field: "x-codex-primary-reset-at" } },
  },
  {
    shape: "ChatGPT plan (Codex) without headers (a WebSocket frame's body): resets_at",
    evidence: {
      statusCode: 429,
      body: JSON.stringify({
        type: "error",
        error: {
          type: "usage_limit_reached",
          message: "The usage limit has been reached",
          resets_at: NOW / 1000 + 600,
        },
        status_code: 429,
      }),
    },
    expected: { kind: "lifts_at", at: seconds(600), source: { field: "error.resets_at" } },
  },
  {
    shape: "ChatGPT plan (Codex): only resets_in_seconds",
    evidence: {
      statusCode: 429,
      body: '{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached","resets_in_seconds":900}}',
    },
    expected: { kind: "lifts_at", at: seconds(900), source: { field: "error.resets_in_seconds" } },
  },
  {
    shape: "ChatGPT plan (Codex): the weekly window spent, the 5 h one not",
    evidence: {
      statusCode: 429,
      headers: {
        "x-codex-primary-used-percent": "40",
        "x-codex-primary-reset-at": String(NOW / 1000 + 3600),
        "x-codex-secondary-used-percent": "100",
        "x-codex-secondary-reset-at": String(NOW / 1000 + 200_000),
      },
      message: "The usage limit has been reached",
    },
    expected: { kind: "lifts_at", at: seconds(200_000), source: { field: "x-codex-secondary-reset-at" } },
  },
  {
    shape: "ChatGPT plan without Codex: usage_not_included is billing",
    evidence: {
      message: "To use Codex with your ChatGPT plan, upgrade to Plus: https://chatgpt.com/explore/plus.",
      body: '{"type":"error","error":{"code":"usage_not_included"}}',
    },
    expected: { kind: "billing", why: "with your ChatGPT plan, upgrade" },
  },
  {
    shape: "GitHub Copilot: 429 quota exceeded with a retry-after of days",
    evidence: { statusCode: 429, message: "Too Many Requests: quota exceeded", headers: { "retry-after": "1209600" } },
    expected: { kind: "lifts_at", at: seconds(1_209_600), source: { field: "retry-after" } },
  },
  {
    shape: "GitHub Copilot as its clients word it: try again in 58 hours",
    evidence: { statusCode: 429, message: "You have exceeded your rate limit. Please try again in 58 hours." },
    expected: { kind: "lifts_at", at: seconds(58 * 3600), source: { text: "try again in 58 hours" } },
  },
  {
    shape: "GitHub Copilot through a proxy: 402 quota_exceeded is billing",
    evidence: { statusCode: 402, body: '{"error":{"code":"quota_exceeded","message":"Quota exceeded"}}' },
    expected: { kind: "billing", why: "HTTP 402" },
  },
  {
    shape: "OpenRouter free-model daily limit: X-RateLimit-Reset (epoch ms) in the body's metadata.headers",
    evidence: {
      statusCode: 429,
      body: JSON.stringify({
        error: {
          message:
            "Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model requests per day",
          code: 429,
          metadata: {
            headers: {
              "X-RateLimit-Limit": "50",
              "X-RateLimit-Remaining": "0",
              "X-RateLimit-Reset": String(NOW + 36e5),
            },
          },
        },
      }),
    },
    expected: {
      kind: "lifts_at",
      at: NOW + 36e5,
      source: { field: "body header x-ratelimit-reset" },
    },
  },
  {
    shape: "OpenRouter credits: 402 is billing",
    evidence: {
      statusCode: 402,
      body: '{"error":{"message":"This request requires more credits, or fewer max_tokens. You requested up to 4096 tokens, but can only afford 1000.","code":402,"metadata":{"provider_name":null}}}',
    },
    expected: { kind: "billing", why: "requires more credits" },
  },
  {
    shape: "Google Gemini per-minute quota: RetryInfo's retryDelay, though the text says quota",
    evidence: {
      statusCode: 429,
      body: JSON.stringify({
        error: {
          code: 429,
          message: "You exceeded your current quota, please check your plan and billing details.",
          status: "RESOURCE_EXHAUSTED",
          details: [
            { "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [{ quotaId: "PerMinute" }] },
            { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "26s" },
          ],
        },
      }),
    },
    expected: { kind: "lifts_at", at: seconds(26), source: { field: "error.details.RetryInfo.retryDelay" } },
  },
  {
    shape: "Google Gemini per-day quota: a limit that says nothing of when",
    evidence: {
      statusCode: 429,
      body: JSON.stringify({
        error: {
          code: 429,
          message: "Quota exceeded for metric generate_content_free_tier_requests",
          status: "RESOURCE_EXHAUSTED",
          details: [
            {
              "@type": "type.googleapis.com/google.rpc.QuotaFailure",
              violations: [{ quotaId: "GenerateRequestsPerDayPerProjectPerModel-FreeTier" }],
            },
          ],
        },
      }),
    },
    expected: { kind: "lifts_unsaid" },
  },
  {
    shape: "OpenCode Go: GoUsageLimitError with retry-after, in OpenCode's own words",
    evidence: {
      statusCode: 429,
      message:
        "weekly usage limit reached. It will reset in 2 days 3 hours. To continue using this model now, enable usage from your available balance - https://opencode.ai/workspace/ws/go",
      headers: { "retry-after": "183600" },
      body: '{"type":"error","error":{"type":"GoUsageLimitError","message":"Go usage limit"},"metadata":{"workspace":"ws","limitName":"weekly"}}',
    },
    expected: { kind: "lifts_at", at: seconds(183_600), source: { field: "retry-after" } },
  },
  {
    shape: "OpenCode Zen credits: 401 CreditsError is billing",
    evidence: {
      statusCode: 401,
      body: '{"type":"error","error":{"type":"CreditsError","message":"Insufficient balance"}}',
    },
    expected: { kind: "billing", why: "CreditsError" },
  },
  {
    shape: "OpenCode Zen monthly limit: 401 MonthlyLimitError is billing (a cap the person raises)",
    evidence: {
      statusCode: 401,
      body: '{"type":"error","error":{"type":"MonthlyLimitError","message":"Monthly limit reached"}}',
    },
    expected: { kind: "billing", why: "MonthlyLimitError" },
  },
  {
    shape: "Z.AI GLM Coding Plan: a reset time in the text, China's time without saying so",
    evidence: {
      statusCode: 429,
      body: '{"error":{"code":"1308","message":"Usage limit reached for 5 hour. Your limit will reset at 2026-12-07 22:38:28"}}',
    },
    expected: { kind: "lifts_at", at: at("2026-12-07T14:38:28Z"), source: { text: "2026-12-07 22:38:28" } },
  },
  {
    shape: "Z.AI GLM Coding Plan in Chinese",
    evidence: {
      statusCode: 429,
      body: '{"error":{"code":"1308","message":"已达到 5 小时的使用上限。您的限额将在 2026-12-07 22:38:28 重置。"}}',
    },
    expected: { kind: "lifts_at", at: at("2026-12-07T14:38:28Z"), source: { text: "2026-12-07 22:38:28" } },
  },
  {
    shape: "Claude Code's machine form: usage limit reached|<epoch seconds>",
    evidence: { message: `Claude AI usage limit reached|${NOW / 1000 + 5400}` },
    expected: {
      kind: "lifts_at",
      at: seconds(5400),
      source: { text: `usage limit reached|${NOW / 1000 + 5400}` },
    },
  },
  {
    shape: "Claude Code's words: resets 10pm (America/New_York)",
    evidence: { message: "You've hit your limit · resets 10pm (America/New_York)" },
    // 22:00 in New York on 2026-12-07 (EST, UTC−5) is 03:00 UTC the next day.
    expected: { kind: "lifts_at", at: at("2026-12-08T03:00:00Z"), source: { text: "resets 10pm (America/New_York)" } },
  },
  {
    shape: "Claude Code's monthly spend limit: billing",
    evidence: { message: "You've hit your monthly spend limit · raise it at claude.ai/settings/usage" },
    expected: { kind: "billing", why: "monthly spend limit" },
  },
  {
    shape: "A plain rate limit that names no time",
    evidence: { statusCode: 429, message: "Too Many Requests" },
    expected: { kind: "lifts_unsaid" },
  },
  {
    shape: "Not a limit: a 401 bad key",
    evidence: { statusCode: 401, message: "invalid x-api-key" },
    expected: { kind: "not_a_limit" },
  },
  {
    shape: "Not a limit: a 500",
    evidence: { statusCode: 500, message: "Internal server error" },
    expected: { kind: "not_a_limit" },
  },
];

describe("reading a provider's limit", () => {
  it.each(rows)("$shape", ({ evidence, expected }) => {
    expect(read(evidence)).toEqual(expected);
  });
});

describe("times said in words", () => {
  const said = (message: string, localZone = "UTC") => read({ statusCode: 429, message }, localZone);

  it.each([
    ["resets in 2h 13m", 2 * 3600 + 13 * 60],
    ["Your limit resets in 2 days, 3 hours and 5 minutes", 2 * 86400 + 3 * 3600 + 300],
    ["rate limited, retrying in ~2 weeks attempt #1", 14 * 86400],
    ["please wait 3 hours 43 minutes", 3 * 3600 + 43 * 60],
    ["Try again in 1m30s.", 90],
    ["try again in 20 min", 1200],
    ["Rate limit: try again in 250ms", 0.25],
  ])("%s", (message, after) => {
    expect(said(message)).toMatchObject({ kind: "lifts_at", at: NOW + Math.ceil(after * 1000) });
  });

  it("a time of day without a zone is the local zone's next one: later today, or tomorrow once passed", () => {
    // 12:00 UTC is 13:00 in Berlin (CET).
    expect(said("Rate limit reached. Try again at 3:00 PM.", "Europe/Berlin")).toMatchObject({
      at: at("2026-12-07T14:00:00Z"),
    });
    expect(said("Rate limit reached. Try again at 9:30 AM.", "Europe/Berlin")).toMatchObject({
      at: at("2026-12-08T08:30:00Z"),
    });
    expect(said("Rate limit reached. Try again at 12:50am.", "UTC")).toMatchObject({ at: at("2026-12-08T00:50:00Z") });
  });

  it("a named zone wins over the local one; UTC too", () => {
    // 12:00 UTC is 04:00 in Los Angeles: 00:50 there has passed today.
    expect(said("usage limit · resets 12:50am (America/Los_Angeles)", "Asia/Tokyo")).toMatchObject({
      at: at("2026-12-08T08:50:00Z"),
    });
    expect(said("Rate limit: try again at 18:00 UTC", "Asia/Tokyo")).toMatchObject({ at: at("2026-12-07T18:00:00Z") });
  });

  it("across a daylight-saving change, the offset in force at the reset", () => {
    // 2027-03-14 02:30 in New York is skipped (clocks go 2:00 → 3:00); 01:00 that night is still EST.
    const march = Date.UTC(2027, 2, 13, 12, 0, 0);
    const reading = readLimit({ statusCode: 429, message: "limit reached, resets 1am (America/New_York)" }, march, {
      localZone: "UTC",
    });
    expect(reading).toMatchObject({ at: at("2027-03-14T06:00:00Z") });
    const after = readLimit({ statusCode: 429, message: "limit reached, resets 4am (America/New_York)" }, march, {
      localZone: "UTC",
    });
    expect(after).toMatchObject({ at: at("2027-03-14T08:00:00Z") });
  });

  it("a date with an offset or Z is taken as written", () => {
    expect(said("limit reached; resets at 2026-12-07T18:30:00+02:00")).toMatchObject({
      at: at("2026-12-07T16:30:00Z"),
    });
    expect(said("limit reached; resets at 2026-12-07T18:30:00Z")).toMatchObject({ at: at("2026-12-07T18:30:00Z") });
  });

  it("numbers that are no time are not read as one", () => {
    expect(said("Rate limit reached: Limit 200000, Used 158833, Requested 62431.")).toEqual({ kind: "lifts_unsaid" });
    expect(said("rate limit reached, resets 5")).toEqual({ kind: "lifts_unsaid" });
    expect(said("rate limit reached, try again at 25pm")).toEqual({ kind: "lifts_unsaid" });
    expect(said("rate limit reached, resets 10pm (Mars/Olympus_Mons)")).toEqual({ kind: "lifts_unsaid" });
  });

  it("headers of the wrong type or garbage are ignored, never thrown on", () => {
    for (const headers of [null, "retry-after: 5", [1, 2], { "retry-after": "soon" }, { "x-ratelimit-reset": "n/a" }])
      expect(read({ statusCode: 429, headers, body: "<html>429</html>" })).toEqual({ kind: "lifts_unsaid" });
  });
});
