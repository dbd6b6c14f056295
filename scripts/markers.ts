// The generated parts of the docs sit between `<!-- name:start -->` and `<!-- name:end -->`: read and replaced here.

const markers = (name: string) => [`<!-- ${name}:start -->`, `<!-- ${name}:end -->`] as const;

/** What stands between the markers `name`, trimmed; undefined when the text has no such markers. */
export function betweenMarkers(text: string, name: string): string | undefined {
  const [start, end] = markers(name);
  const from = text.indexOf(start);
  const to = text.indexOf(end, from);
  if (from < 0 || to < 0) return undefined;
  return text.slice(from + start.length, to).trim();
}

/** The text with what stands between the markers `name` replaced by `body`. */
export function replaceBetweenMarkers(text: string, name: string, body: string): string {
  const [start, end] = markers(name);
  const from = text.indexOf(start);
  const to = text.indexOf(end, from);
  if (from < 0 || to < 0) throw new Error(`no ${start} … ${end} markers`);
  return `${text.slice(0, from + start.length)}\n${body}\n${text.slice(to)}`;
}
