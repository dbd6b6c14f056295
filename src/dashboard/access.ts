// Who may use the page. On a loopback address, anyone on this machine may look, and an action needs the page's own
// anti-forgery token (a page of another site cannot read it, so cannot post it). On any other address, every request
// needs the access token (given by option or environment), compared in constant time; without one the page refuses
// to start. The token arrives once in the URL (`?token=`), and is kept in a cookie for the rest of the visit.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

export const TOKEN_VARIABLE = "TODO_CONTINUATION_DASHBOARD_TOKEN";
const COOKIE = "tc_dashboard";

/** The host names and addresses that only this machine reaches. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d+\.\d+\.\d+$/.test(bare) || bare === "::ffff:127.0.0.1";
}

export class AccessError extends Error {}

/** Why a page on `host` may not start, or undefined when it may. */
export function refusalFor(host: string, token: string | undefined): string | undefined {
  if (isLoopback(host) || (token !== undefined && token.length > 0)) return undefined;
  return (
    `the page would listen on ${host}, which other machines reach, with no access token: give one with --token or ` +
    `${TOKEN_VARIABLE} (at least 16 characters; \`openssl rand -hex 16\` makes one), or listen on 127.0.0.1`
  );
}

/** Equal in constant time, whatever the lengths (both sides hashed first). */
export function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return decodeURIComponent(value.join("="));
  }
  return undefined;
}

export class Access {
  /** The page's anti-forgery token: new at each start, in every form the page draws. */
  readonly formToken = randomBytes(18).toString("base64url");

  constructor(private readonly token: string | undefined) {
    if (token !== undefined && token.length < 16)
      throw new AccessError(`the access token is too short (${token.length} characters): give at least 16`);
  }

  get required(): boolean {
    return this.token !== undefined;
  }

  /** The request carries the access token (header, cookie or query), or none is needed. */
  admitted(req: IncomingMessage, url: URL): boolean {
    if (!this.token) return true;
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const given = bearer ?? cookieOf(req, COOKIE) ?? url.searchParams.get("token") ?? "";
    return sameSecret(given, this.token);
  }

  /** The cookie that keeps the access token for the visit, when it came in the URL. */
  cookieFor(url: URL): string | undefined {
    const given = url.searchParams.get("token");
    if (!given || !this.token) return undefined;
    return `${COOKIE}=${encodeURIComponent(given)}; HttpOnly; SameSite=Strict; Path=/`;
  }

  /** An action's form carries the page's token, and its origin, when the browser says it, is this page's. */
  formAllowed(req: IncomingMessage, fields: URLSearchParams): boolean {
    const origin = req.headers.origin;
    if (origin && origin !== "null" && new URL(origin).host !== req.headers.host) return false;
    return sameSecret(fields.get("csrf") ?? "", this.formToken);
  }
}
