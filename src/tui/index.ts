// The module OpenCode's TUI loads (tui.json: "opencode-todo-continuation", or this file's file:// URL). A TUI module
// is `{ id, tui }` and never has a server part; the server plugin is the package's main module.
//
// This is the only module that imports the TUI's runtime (@opentui/solid, solid-js): OpenCode maps those imports to
// its own copies for a plugin's entry module, not for the modules it imports in turn.
import { createElement, insert, setProp } from "@opentui/solid";
import { createRenderEffect, createSignal, onCleanup } from "solid-js";
import type { PanelRenderer, TuiTheme } from "./host-api.js";
import type { PanelLine, Tone } from "./panel.js";
import { createTuiPlugin } from "./tui-plugin.js";

/** The most lines the panel has (title, state, hint, budget). */
const LINES = 4;

function color(theme: TuiTheme, tone: Tone): unknown {
  const c = theme.current;
  const pick = { title: c.text, normal: c.text, active: c.accent ?? c.primary, warning: c.warning, muted: c.textMuted }[
    tone
  ];
  return pick ?? c.text;
}

function text(theme: TuiTheme, line: () => PanelLine | undefined): unknown {
  const node = createElement("text");
  insert(node, () => line()?.text ?? "");
  createRenderEffect(() => setProp(node, "fg", color(theme, line()?.tone ?? "muted")));
  return node;
}

/** The panel and the line beside the prompt, drawn with OpenCode's own Solid renderer. */
const opentuiRenderer: PanelRenderer = {
  signal<T>(initial: T) {
    const [get, set] = createSignal(initial);
    return [get, (next: T) => void set(next)];
  },
  panel(theme, lines) {
    const box = createElement("box");
    for (let i = 0; i < LINES; i++)
      insert(
        box,
        text(theme, () => lines()[i]),
      );
    return box;
  },
  line: text,
  onCleanup(fn) {
    onCleanup(fn);
  },
};

export default { id: "todo-continuation", tui: createTuiPlugin(opentuiRenderer) };
