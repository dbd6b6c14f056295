// A setup file (vitest.config.ts): every test file gets configuration, data, cache and state folders of its own, so that
// nothing a test runs reads the person's ~/.config/opencode or ~/.local/share/opencode (a database of their own at the
// default path made doctor's plugin section fail), or writes a plugin status file into their ~/.local/state.
import { tempFolder } from "./temp-folders.js";

process.env.XDG_CONFIG_HOME = tempFolder("config-home-");
process.env.XDG_DATA_HOME = tempFolder("data-home-");
process.env.XDG_CACHE_HOME = tempFolder("cache-home-");
process.env.XDG_STATE_HOME = tempFolder("state-home-");
