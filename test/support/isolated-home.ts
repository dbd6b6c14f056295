// A setup file (vitest.config.ts): every test file gets configuration and state folders of its own, so that nothing
// a test runs reads the person's ~/.config/opencode or writes a plugin status file into their ~/.local/state.
import { tempFolder } from "./temp-folders.js";

process.env.XDG_CONFIG_HOME = tempFolder("config-home-");
process.env.XDG_STATE_HOME = tempFolder("state-home-");
