// OpenCode's TUI maps these imports to its own bundled copies for every TUI plugin (also inside node_modules), so
// the package neither depends on them nor installs them; only the few calls index.ts makes are declared.
declare module "@opentui/solid" {
  export function createElement(tag: string): unknown;
  export function insert(parent: unknown, accessor: unknown): unknown;
  export function setProp(node: unknown, name: string, value: unknown): unknown;
}

declare module "solid-js" {
  export function createSignal<T>(value: T): [() => T, (next: T) => T];
  export function createRenderEffect(fn: () => void): void;
  export function onCleanup(fn: () => void): void;
}
