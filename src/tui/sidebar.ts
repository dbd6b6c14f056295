// The panel drawn with OpenCode's own Solid renderer (the only module that needs the TUI's runtime).
import { createElement, insert, setProp } from "@opentui/solid";
import { createRenderEffect, createSignal } from "solid-js";
import type { PanelRenderer, TuiTheme } from "./host-api.js";
import type { Tone } from "./panel.js";

/** The most lines the panel has (title, state, hint, budget). */
const LINES = 4;

function color(theme: TuiTheme, tone: Tone): unknown {
  const c = theme.current;
  const pick = { title: c.text, normal: c.text, active: c.accent ?? c.primary, warning: c.warning, muted: c.textMuted }[tone];
  return pick ?? c.text;
}

export const opentuiRenderer: PanelRenderer = {
  signal<T>(initial: T) {
    const [get, set] = createSignal(initial);
    return [get, (next: T) => void set(next)];
  },
  panel(theme, lines) {
    const box = createElement("box");
    for (let i = 0; i < LINES; i++) {
      const text = createElement("text");
      insert(text, () => lines()[i]?.text ?? "");
      createRenderEffect(() => setProp(text, "fg", color(theme, lines()[i]?.tone ?? "muted")));
      insert(box, text);
    }
    return box;
  },
};
