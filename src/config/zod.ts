// zod, loaded when first needed rather than when the configuration is imported: its evaluation is about 14 ms in
// OpenCode's Bun, half of the TUI plugin's load, and a TUI whose tui.json entry gives no options and whose project has
// no configuration file checks nothing at all. Entry points that will check something load it ahead (`loadZod`: its
// ES module, the fast way); a check that comes without that loads it synchronously (its CommonJS build, about twice
// as slow). Whichever comes first stays: every schema of the process is made by one instance of the library.
import { createRequire } from "node:module";
import type * as Zod from "zod";

let loaded: typeof Zod | undefined;

/** zod, for building and checking schemas now. */
export function zod(): typeof Zod {
  loaded ??= createRequire(import.meta.url)("zod") as typeof Zod;
  return loaded;
}

/** Loads zod ahead of the checks an entry point is about to make. */
export async function loadZod(): Promise<void> {
  loaded ??= (await import("zod")) as typeof Zod;
}
