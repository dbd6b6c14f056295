// A plugin that only listens: each event OpenCode hands its plugins' `event` hook is appended, as handed, one JSON line
// to the file its options name. The conformance test loads it into the real OpenCode, to hold what a plugin hears there
// to what the same server streams on /event: the simulated OpenCode's stream is what the e2e plugin host hands on.
// Its only export is the plugin (OpenCode rejects a module with any export that is not a function).
import { appendFileSync } from "node:fs";

export default async function EventTap(_input: unknown, options?: { file?: string }) {
  const file = options?.file;
  if (!file) throw new Error("the event tap needs a file option");
  return {
    event: ({ event }: { event: unknown }) => appendFileSync(file, `${JSON.stringify(event)}\n`),
  };
}
