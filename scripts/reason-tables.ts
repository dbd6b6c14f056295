// The tables of docs/how-it-decides.md made from the reasons' own tables: the guards in the order they run
// (core/skip-reasons.ts, in the order of core/reasons.ts) and what ends a countdown (core/cancel-reasons.ts). Written
// by `npm run docs:reasons`; test/docs/reasons.test.ts fails when the page differs.
import { CANCEL_FACTS } from "../src/core/cancel-reasons.js";
import { CANCEL_REASONS, SKIP_REASONS } from "../src/core/reasons.js";
import { SKIP_FACTS } from "../src/core/skip-reasons.js";

const cell = (text: string) => text.replace(/\|/g, "\\|");
const code = (name: string) => `\`${name}\``;
/** A Markdown table row; an empty last cell is written `| |`, as by hand. */
const row = (cells: readonly string[]) => `| ${cells.map(cell).join(" | ")} |`.replace(/\| {2}\|$/, "| |");

/** The guard table: each skip reason with its place in the chain, when it says no, and the options that change it. */
export function guardTable(): string {
  return [
    "| # | reason | when, and what happens then | option |",
    "|---|---|---|---|",
    ...SKIP_REASONS.map((reason, index) => {
      const { when, options } = SKIP_FACTS[reason];
      return row([String(index + 1), code(reason), when, options.map(code).join(", ")]);
    }),
  ].join("\n");
}

/** The countdowns' table: each cancel reason with what ended the countdown. */
export function cancelTable(): string {
  return [
    "| reason | what ended the countdown |",
    "|---|---|",
    ...CANCEL_REASONS.map((reason) => row([code(reason), CANCEL_FACTS[reason].when])),
  ].join("\n");
}
