// The plugin's hooks over an open store (src/plugin/plugin.ts `pluginHooks`): dispose() is one stop, whoever asks and
// however often, and each call resolves only once its engine is disposed and its store closed (OpenCode may close
// the instance from two places at once).
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/resolve.js";
import { OpenCodeHost } from "../../src/host/opencode-host.js";
import { pluginHooks } from "../../src/plugin/plugin.js";
import { openStore } from "../../src/store/open/open.js";
import { FakeHost } from "../support/fake-host.js";
import { fakeSdkClient } from "../support/fake-sdk-client.js";
import { tempFolder } from "../support/temp-folders.js";

describe("dispose()", () => {
  it("two at once are one stop: each resolves only once the store is closed", async () => {
    const directory = tempFolder();
    const databasePath = join(directory, "tc.db");
    const store = await openStore(databasePath);
    const client = fakeSdkClient(new FakeHost());
    const input = { client, directory, worktree: directory, project: { id: "p" } } as never;
    const host = new OpenCodeHost(client as never, directory);
    const hooks = pluginHooks(input, resolveConfig({ databasePath }, {}), store, host);
    let closes = 0;
    const close = store.close.bind(store);
    store.close = async () => {
      closes++;
      await close();
    };
    const first = hooks.dispose().then(() => closes);
    const second = hooks.dispose().then(() => closes);
    expect(await Promise.all([first, second])).toEqual([1, 1]);
    await hooks.dispose();
    expect(closes).toBe(1);
  });
});
