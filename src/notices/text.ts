// Text cut to a service's limits: by characters (code points, never half an emoji), an ellipsis marking the cut.

/** At most `max` characters, an ellipsis marking a cut. */
export function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

/** The first line of `text` that says something, at most `max` characters. */
export function firstLine(text: string, max = 200): string {
  const line =
    text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .find(Boolean) ?? "";
  return clip(line, max);
}
