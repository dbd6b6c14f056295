// The module OpenCode's TUI loads (tui.json: "opencode-todo-continuation", or this file's file:// URL). A TUI module
// is `{ id, tui }` and never has a server part; the server plugin is the package's main module.
import { opentuiRenderer } from "./sidebar.js";
import { createTuiPlugin } from "./tui-plugin.js";

export default { id: "todo-continuation", tui: createTuiPlugin(opentuiRenderer) };
