// What a check printed, before it is kept (the database, the audit, the prompt, a notice): the values of the
// environment's secret-looking variables, and the shapes of common tokens, replaced by a mark. A test run prints its
// environment more often than one would think (a failing config test, `env` in a CI script).

/** A variable whose name says it holds a secret. */
const SECRET_NAME = /(TOKEN|SECRET|PASSWORD|PASSWD|PASS|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY|CREDENTIAL|AUTH)/i;
/** Values shorter than this are too common to replace ("1", "true"). */
const MIN_SECRET_LENGTH = 8;
/** An authorization header's credentials (the scheme is kept). */
const AUTH_HEADER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{12,}/g;
/** Tokens recognisable by their shape: GitHub, OpenAI/Anthropic-style, AWS access keys, Slack. */
const TOKEN_SHAPES = [
  /\bgh[pousr]_[A-Za-z0-9]{20,}\b/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}\b/g,
  /\bsk-[A-Za-z0-9_-]{16,}\b/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g,
];
export const SECRET_MARK = "[secret]";

export function withoutSecrets(text: string, env: Readonly<Record<string, string | undefined>>): string {
  let out = text;
  const values = Object.entries(env)
    .filter(([name, value]) => SECRET_NAME.test(name) && value !== undefined && value.length >= MIN_SECRET_LENGTH)
    .map(([, value]) => value!)
    // The longest first, so that a secret containing another is replaced whole.
    .sort((a, b) => b.length - a.length);
  for (const value of values) out = out.split(value).join(SECRET_MARK);
  out = out.replace(AUTH_HEADER, `$1 ${SECRET_MARK}`);
  for (const shape of TOKEN_SHAPES) out = out.replace(shape, SECRET_MARK);
  return out;
}
