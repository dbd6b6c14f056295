// When a limit lifts, as a provider's answer says it in fields: the headers OpenCode keeps on a failed turn's error
// (`retry-after`, Anthropic's `anthropic-ratelimit-*`, Codex's `x-codex-*`, OpenAI's `x-ratelimit-reset-*`) and the
// JSON body (`resets_at`, `resets_in_seconds`, OpenRouter's `metadata.headers`, Gemini's `RetryInfo`). The shapes and
// their sources: docs/research/provider-limits.md.
import { retryAfterMs } from "../errors.js";
import { obj } from "../fields.js";
import { durationMs } from "./reset-text.js";

/** A reset read from a field: when, and the field's name (for the audit row). */
export interface FieldReset {
  at: number;
  field: string;
}

export type Headers = Record<string, string>;

/** Header names lower-cased (OpenCode's are; a body's copy of them may not be), values as strings. */
export function headersOf(raw: unknown): Headers {
  const headers: Headers = {};
  for (const [name, value] of Object.entries(obj(raw) ?? {}))
    if (typeof value === "string" || typeof value === "number") headers[name.toLowerCase()] = String(value);
  return headers;
}

/** An epoch in seconds or milliseconds (told apart by size), or undefined. */
function epochMs(value: string | number | undefined): number | undefined {
  const n = typeof value === "number" ? value : Number(value);
  if (value === undefined || value === "" || !Number.isFinite(n) || n <= 0) return undefined;
  return n > 1e12 ? n : n * 1000;
}

/**
 * A reset header whose kind is not fixed (`x-ratelimit-reset`): an epoch in ms or s, or seconds from now; OpenAI's
 * `x-ratelimit-reset-*` are Go durations ("6m0s", "12ms").
 */
function flexibleReset(value: string, now: number): number | undefined {
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) {
    const n = Number(value);
    return n > 1e9 ? epochMs(n) : now + Math.ceil(n * 1000);
  }
  const ms = durationMs(value);
  if (ms !== undefined) return now + ms;
  const date = Date.parse(value);
  return Number.isFinite(date) ? date : undefined;
}

/** The latest of the resets whose window is spent, or of all of them when none says which is. */
function latestReset(resets: Array<{ at: number; field: string; spent: boolean | undefined }>): FieldReset | undefined {
  const known = resets.filter((r) => Number.isFinite(r.at));
  const spent = known.filter((r) => r.spent === true);
  const pool = spent.length > 0 ? spent : known.filter((r) => r.spent !== false);
  const latest = pool.sort((a, b) => b.at - a.at)[0];
  return latest && { at: latest.at, field: latest.field };
}

/** From headers: `retry-after` first (the provider's own answer to "when may I retry"), then each provider's own. */
export function resetInHeaders(headers: Headers, now: number): FieldReset | undefined {
  const after = retryAfterMs(headers, now);
  if (after !== undefined)
    return { at: now + after, field: headers["retry-after-ms"] !== undefined ? "retry-after-ms" : "retry-after" };

  // Claude subscriptions: the unified window's reset, epoch seconds.
  const unified = epochMs(headers["anthropic-ratelimit-unified-reset"]);
  if (unified !== undefined) return { at: unified, field: "anthropic-ratelimit-unified-reset" };

  // ChatGPT plans (Codex): each window's reset, epoch seconds, or seconds from now; spent at 100 %.
  const codex = ["primary", "secondary"].flatMap((window) => {
    const at =
      epochMs(headers[`x-codex-${window}-reset-at`]) ??
      (headers[`x-codex-${window}-reset-after-seconds`] !== undefined
        ? now + Number(headers[`x-codex-${window}-reset-after-seconds`]) * 1000
        : undefined);
    const used = Number(headers[`x-codex-${window}-used-percent`]);
    return at === undefined
      ? []
      : [{ at, field: `x-codex-${window}-reset-at`, spent: Number.isFinite(used) ? used >= 100 : undefined }];
  });
  const codexReset = latestReset(codex);
  if (codexReset) return codexReset;

  // Anthropic's API (RFC 3339) and OpenAI's and others' (durations, epochs): spent where `remaining` is 0.
  const windows = Object.keys(headers).flatMap((name) => {
    const match = /^(anthropic-ratelimit|x-ratelimit)-(?:([a-z-]+)-)?reset(?:-([a-z-]+))?$/.exec(name);
    if (!match) return [];
    const [, prefix, before, after] = match;
    const kind = before ?? after;
    const at = prefix === "anthropic-ratelimit" ? Date.parse(headers[name]!) : flexibleReset(headers[name]!, now);
    const remaining =
      headers[kind ? `${prefix}-${kind}-remaining` : `${prefix}-remaining`] ??
      headers[kind ? `${prefix}-remaining-${kind}` : `${prefix}-remaining`];
    return at === undefined
      ? []
      : [{ at, field: name, spent: remaining === undefined ? undefined : Number(remaining) <= 0 }];
  });
  return latestReset(windows);
}

/** A body as JSON, or undefined: bodies are often HTML, text or cut short. */
export function jsonOf(body: string | undefined): Record<string, unknown> | undefined {
  if (!body) return undefined;
  try {
    return obj(JSON.parse(body));
  } catch {
    return undefined;
  }
}

/** From a JSON body: Codex's `resets_at`/`resets_in_seconds`, OpenRouter's copied headers, Gemini's `RetryInfo`. */
export function resetInBody(body: Record<string, unknown>, now: number): FieldReset | undefined {
  const error = obj(body.error) ?? body;
  const at = epochMs(error.resets_at as number | string | undefined);
  if (at !== undefined) return { at, field: "error.resets_at" };
  const inSeconds = Number(error.resets_in_seconds);
  if (error.resets_in_seconds !== undefined && Number.isFinite(inSeconds) && inSeconds >= 0)
    return { at: now + inSeconds * 1000, field: "error.resets_in_seconds" };

  // Headers copied into the body (OpenRouter's `error.metadata.headers`, a WebSocket frame's `headers`) read as headers.
  const copied = headersOf(obj(obj(error.metadata)?.headers) ?? obj(body.headers));
  const fromCopied = resetInHeaders(copied, now);
  if (fromCopied) return { ...fromCopied, field: `body header ${fromCopied.field}` };

  const details = Array.isArray(error.details) ? error.details : [];
  for (const detail of details) {
    const delay = obj(detail)?.retryDelay;
    if (typeof delay === "string") {
      const ms = durationMs(delay);
      if (ms !== undefined) return { at: now + ms, field: "error.details.RetryInfo.retryDelay" };
    }
  }
  return undefined;
}
