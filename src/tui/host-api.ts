// The slice of OpenCode 1.18.33's TUI plugin API (`@opencode-ai/plugin/tui`) this plugin uses, typed here because
// the full types pull in @opentui packages that OpenCode itself provides at run time (see README "In the TUI").
import type { PanelLine } from "./panel.js";

export interface TuiKeyEvent {
  name?: string;
  sequence?: string;
  ctrl?: boolean;
  meta?: boolean;
  shift?: boolean;
}

export interface TuiCommandSpec {
  namespace: "palette";
  name: string;
  title: string;
  desc?: string;
  category?: string;
  run(): void;
}

export interface TuiTheme {
  current: Record<string, unknown>;
}

export interface TuiApi {
  keymap: {
    registerLayer(layer: {
      commands: TuiCommandSpec[];
      bindings: Array<{ key: string; cmd: string; desc?: string }>;
    }): unknown;
    /** Sees every key before OpenCode handles it; the handler does not consume it. */
    intercept(type: "key", handler: (input: { event: TuiKeyEvent }) => void): unknown;
  };
  slots: {
    register(plugin: {
      order?: number;
      slots: Record<string, (ctx: { theme: TuiTheme }, props: { session_id: string }) => unknown>;
    }): unknown;
  };
  event: {
    on(type: string, handler: (event: { type: string; properties?: Record<string, unknown> }) => void): () => void;
  };
  ui: {
    toast(input: {
      variant: "info" | "success" | "warning" | "error";
      title?: string;
      message: string;
      duration?: number;
    }): void;
    /** The dialog stack (the palette is one): keys go to the dialog while one is open. */
    dialog?: { readonly open: boolean };
  };
  route: { readonly current: { name: string; params?: Record<string, unknown> } };
  state: { path: { directory: string } };
  lifecycle: { onDispose(fn: () => void | Promise<void>): unknown };
}

/** How the plugin draws: OpenCode's Solid renderer in the TUI, a recorder in tests. */
export interface PanelRenderer {
  /** A reactive value: reading it inside a drawn line subscribes the line. */
  signal<T>(initial: T): [() => T, (next: T) => void];
  /** The node for the `sidebar_content` slot; `lines` is read reactively. */
  panel(theme: TuiTheme, lines: () => PanelLine[]): unknown;
  /** The node for the `session_prompt_right` slot: one line, read reactively (nothing drawn while undefined). */
  line(theme: TuiTheme, line: () => PanelLine | undefined): unknown;
  /** Runs `fn` when what is being drawn now is taken off the screen (OpenCode hides the sidebar). */
  onCleanup(fn: () => void): void;
}
