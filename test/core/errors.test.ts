// The error classifier on the payloads OpenCode 1.18.33 really publishes (captured from a real `opencode serve`
// with a scripted provider failing in each way; see docs/how-it-decides.md).
import { describe, expect, it } from "vitest";
import { classifyError, retryAfterMs } from "../../src/core/errors.js";
import { errorFields } from "../../src/core/fields.js";

const apiError = (data: Record<string, unknown>) => ({ name: "APIError", data: { isRetryable: false, ...data } });
const NOW = Date.parse("2026-11-23T02:12:00Z");

describe("classifyError on OpenCode's real session.error payloads", () => {
  it.each<[string, unknown, string]>([
    [
      "400 bad request",
      apiError({
        message: "Invalid request: bad param",
        statusCode: 400,
        responseBody: '{"error":{"message":"Invalid request: bad param","type":"invalid_request_error"}}',
      }),
      "permanent",
    ],
    [
      "400 that mentions 500 (OpenCode retried it by its text)",
      apiError({ message: "Invalid value 500 for max_tokens", statusCode: 400 }),
      "permanent",
    ],
    [
      "401 invalid api key",
      apiError({
        message: "Incorrect API key provided: x.",
        statusCode: 401,
        responseBody: '{"error":{"code":"invalid_api_key"}}',
      }),
      "permanent",
    ],
    ["403 forbidden", apiError({ message: "You are not allowed to access this model", statusCode: 403 }), "permanent"],
    [
      "429 after OpenCode's 5 retries",
      apiError({
        message: "Rate limit reached for requests",
        statusCode: 429,
        isRetryable: true,
        responseHeaders: { "retry-after-ms": "200" },
      }),
      "limit",
    ],
    [
      "429 for an exhausted quota",
      apiError({
        message: "You exceeded your current quota",
        statusCode: 429,
        isRetryable: true,
        responseBody: '{"error":{"code":"insufficient_quota"}}',
      }),
      "permanent",
    ],
    [
      "500 overloaded",
      apiError({
        message: "The server had an error while processing your request: overloaded",
        statusCode: 500,
        isRetryable: true,
      }),
      "transient",
    ],
    [
      "503",
      apiError({
        message: "The engine is currently overloaded, please try again later",
        statusCode: 503,
        isRetryable: true,
      }),
      "transient",
    ],
    [
      "529 (Anthropic's overloaded)",
      apiError({ message: "Overloaded", statusCode: 529, isRetryable: true }),
      "transient",
    ],
    [
      "connection refused (no status)",
      apiError({
        message: "Cannot connect to API: Unable to connect. Is the computer able to access the url?",
        isRetryable: true,
      }),
      "transient",
    ],
    [
      "socket closed mid-request",
      apiError({ message: "Cannot connect to API: The socket connection was closed unexpectedly.", isRetryable: true }),
      "transient",
    ],
    ["connection reset", apiError({ message: "Connection reset by server", isRetryable: true }), "transient"],
    [
      "context overflow",
      {
        name: "ContextOverflowError",
        data: {
          message:
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
        },
      },
      "token_limit",
    ],
    [
      "too large to compact",
      {
        name: "ContextOverflowError",
        data: { message: "Session too large to compact - context exceeds model limit even after stripping media" },
      },
      "token_limit",
    ],
    [
      "unknown agent (prompt accepted, never started)",
      {
        name: "UnknownError",
        data: { message: 'Agent not found: "writer". Available agents: build, explore, general, plan' },
      },
      "permanent",
    ],
    [
      "unknown model",
      { name: "UnknownError", data: { message: "Model not found: scripted/no-such-model. Did you mean: model-1?" } },
      "permanent",
    ],
    [
      "a missing file part (the turn still runs)",
      { name: "UnknownError", data: { message: "File not found: /no/such/file.txt" } },
      "other",
    ],
    ["the user pressed Esc", { name: "MessageAbortedError", data: { message: "The operation was aborted." } }, "abort"],
    [
      "no API key could be loaded",
      { name: "ProviderAuthError", data: { providerID: "openai", message: "API key is missing" } },
      "permanent",
    ],
    ["output too long", { name: "MessageOutputLengthError", data: {} }, "other"],
    [
      "a usage plan's limit",
      apiError({
        message: "Go limit reached",
        statusCode: 429,
        isRetryable: true,
        responseBody: '{"type":"GoUsageLimitError"}',
      }),
      "limit",
    ],
  ])("%s → %s", (_what, payload, kind) => {
    expect(classifyError(errorFields(payload, NOW))).toBe(kind);
  });
});

describe("retry-after as OpenCode passes it on (error.data.responseHeaders)", () => {
  it("reads retry-after-ms, retry-after in seconds, and retry-after as an HTTP date", () => {
    expect(retryAfterMs({ "retry-after-ms": "200" }, NOW)).toBe(200);
    expect(retryAfterMs({ "Retry-After": "20" }, NOW)).toBe(20_000);
    expect(retryAfterMs({ "retry-after": "Mon, 23 Nov 2026 02:12:30 GMT" }, NOW)).toBe(30_000);
    expect(retryAfterMs({ "retry-after": "yesterday" }, NOW)).toBeUndefined();
    expect(retryAfterMs({ "retry-after": "Mon, 23 Nov 2026 02:11:00 GMT" }, NOW)).toBeUndefined();
    expect(retryAfterMs({}, NOW)).toBeUndefined();
    expect(retryAfterMs(undefined, NOW)).toBeUndefined();
  });

  it("travels from the payload into the error report", () => {
    expect(
      errorFields(
        apiError({ message: "x", statusCode: 429, isRetryable: true, responseHeaders: { "retry-after": "7" } }),
        NOW,
      ),
    ).toMatchObject({
      statusCode: 429,
      isRetryable: true,
      retryAfterMs: 7000,
    });
  });
});
