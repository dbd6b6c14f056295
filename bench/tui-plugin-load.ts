// Run by OpenCode's own Bun (the opencode binary, BUN_BE_BUN=1), once per sample: what OpenCode does with the TUI
// plugin before its first frame — import the module graph (dist/tui/tui-plugin.js: all of it but the entry's drawing
// imports, which OpenCode maps to copies it has already loaded) and run `tui()` until it resolves — timed, in a fresh
// process so that nothing is cached. Prints {"loadMs": …}. Environment: TC_LOAD_MODULE, the module's path, and
// TC_LOAD_DATABASE, the database path given as the plugin's option (as a tui.json entry with options does); without
// it the plugin gets no options (the database then comes from TODO_CONTINUATION_DB, as from its default path).
const modulePath = process.env.TC_LOAD_MODULE;
const databasePath = process.env.TC_LOAD_DATABASE;
if (!modulePath) throw new Error("tui-plugin-load.ts: set TC_LOAD_MODULE");
const started = performance.now();
const { createTuiPlugin } = (await import(modulePath)) as {
  createTuiPlugin: (renderer: unknown) => (api: unknown, options: unknown) => Promise<unknown>;
};
const noop = () => undefined;
const renderer = {
  signal: <T>(value: T) => [() => value, noop],
  panel: () => ({}),
  line: () => ({}),
  onCleanup: noop,
};
const api = {
  keymap: { registerLayer: noop, intercept: noop },
  slots: { register: noop },
  event: { on: () => noop },
  ui: { toast: noop, dialog: { open: false } },
  route: { current: { name: "home" } },
  state: { path: { directory: process.cwd() } },
  lifecycle: { onDispose: noop },
};
await createTuiPlugin(renderer)(api, databasePath ? { databasePath } : {});
process.stdout.write(`${JSON.stringify({ loadMs: performance.now() - started })}\n`);
process.exit(0);
