// Markup made safe by construction: everything put into an `html` template is text (escaped) unless it is itself
// markup made here. Titles, todos, reasons and details come from sessions and models; none of them can become markup.

const MARKUP = Symbol("markup");

export interface Markup {
  readonly [MARKUP]: string;
}

/** What may go into a template: text, numbers, markup, or lists of them; nothing for null, undefined and false. */
export type Fragment = Markup | string | number | null | undefined | false | readonly Fragment[];

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeText(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

function isMarkup(value: unknown): value is Markup {
  return typeof value === "object" && value !== null && MARKUP in value;
}

function render(fragment: Fragment): string {
  if (fragment === null || fragment === undefined || fragment === false) return "";
  if (isMarkup(fragment)) return fragment[MARKUP];
  if (Array.isArray(fragment)) return fragment.map(render).join("");
  return escapeText(String(fragment));
}

/** A template whose interpolations are escaped (attribute values included: they are quoted in the template). */
export function html(strings: TemplateStringsArray, ...values: Fragment[]): Markup {
  let out = strings[0]!;
  values.forEach((value, i) => (out += render(value) + strings[i + 1]!));
  return { [MARKUP]: out };
}

/** Markup written in this module's files as a constant (the style sheet, the page's script): never given text. */
export function trusted(constant: string): Markup {
  return { [MARKUP]: constant };
}

export function toHtml(markup: Markup): string {
  return markup[MARKUP];
}
