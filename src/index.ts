// The module OpenCode loads (by npm name or as a file:// path). OpenCode calls every exported function as a plugin,
// once per distinct function, so every export here is the same function: the plugin, which is also the factory of
// the programmatic API.
import { TodoContinuation } from "./plugin/plugin.js";

export type { TodoContinuationApi, TodoContinuationHooks } from "./plugin/plugin.js";
export type { Config } from "./config/resolve.js";

export default TodoContinuation;
export { TodoContinuation, TodoContinuation as createTodoContinuation };
