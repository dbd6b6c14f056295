// JSON with comments and trailing commas, as OpenCode's own config files allow. Comments are blanked out rather than
// removed, so that a syntax error's position is still the position in the file the person edits.

export class JsoncError extends Error {
  constructor(
    readonly line: number,
    readonly column: number,
    reason: string,
  ) {
    super(`line ${line}, column ${column}: ${reason}`);
    this.name = "JsoncError";
  }
}

/** The text with `//` and `/* *\/` comments and commas before `}` or `]` replaced by spaces; strings untouched. */
export function blankComments(text: string): string {
  const out = text.split("");
  let i = 0;
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== "\n" && out[k] !== "\r") out[k] = " ";
  };
  let lastComma = -1;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      lastComma = -1;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
      i++;
    } else if (c === "/" && text[i + 1] === "/") {
      const end = text.indexOf("\n", i);
      blank(i, end === -1 ? text.length : end);
      i = end === -1 ? text.length : end;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      blank(i, end === -1 ? text.length : end + 2);
      i = end === -1 ? text.length : end + 2;
    } else {
      if (c === ",") lastComma = i;
      else if ((c === "}" || c === "]") && lastComma !== -1) blank(lastComma, lastComma + 1);
      if (!/\s/.test(c) && c !== ",") lastComma = -1;
      i++;
    }
  }
  return out.join("");
}

function position(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split("\n");
  return { line: before.length, column: before[before.length - 1]!.length + 1 };
}

/** Parses JSONC; a syntax error is a JsoncError with the line and column where the parser stopped. */
export function parseJsonc(text: string): unknown {
  const json = blankComments(text.replace(/^\uFEFF/, ""));
  try {
    return JSON.parse(json);
  } catch (error) {
    const reason = (error as Error).message;
    const at = /position (\d+)/.exec(reason);
    const { line, column } = at ? position(json, Number(at[1])) : { line: 0, column: 0 };
    throw new JsoncError(line, column, reason.replace(/ in JSON at position \d+.*$/s, ""));
  }
}
