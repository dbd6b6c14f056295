// The package as users get it: `npm pack`, installed by OpenCode's own installer (which never runs install scripts,
// so better-sqlite3 stays unbuilt) and then loaded by its bare npm name; or installed by the user's `npm install` into
// OpenCode's config folder and loaded from there. Its TUI module: package-tui.system.test.ts.
import { existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { E2E } from "./support/harness.js";
import { NAME, PackedPlugin } from "./support/packed-plugin.js";
import { UserShell } from "./support/user-install.js";
import { script } from "./scenarios.js";

describe("the packed plugin", () => {
  const packed = new PackedPlugin();
  let world: E2E | undefined;
  let inConfig: E2E | undefined;

  beforeAll(() => packed.pack(), 120_000);
  afterAll(async () => {
    await world?.stop();
    await inConfig?.stop();
    packed.dispose();
  });

  it(
    "is installed by OpenCode from the tarball, then loaded by its npm name, and continues a session both times",
    { timeout: 240_000 },
    async () => {
      const { env, tarball } = packed;
      world = new E2E(script, {}, { pluginSpec: `${NAME}@file:${tarball}`, env });
      await world.start();
      const first = await world.session("basic");
      await world.prompt(first, "scenario: basic");
      await world.waitForAudit(first, "injected", 120_000);
      await world.waitForAudit(first, "skipped:todos_complete", 20_000);

      const packages = join(world.root, "home", "cache", "opencode", "packages");
      // OpenCode keys the install folder by the spec as written, slashes and all.
      const installedRoot = join(packages, `${NAME}@file:${tarball}`);
      const installed = join(installedRoot, "node_modules");
      expect(existsSync(join(installed, NAME, "dist", "index.js"))).toBe(true);
      // OpenCode installs optional dependencies but never runs their install scripts: better-sqlite3 is there, unbuilt,
      // and the plugin does not need it inside OpenCode's Bun.
      expect(existsSync(join(installed, "better-sqlite3", "package.json"))).toBe(true);
      expect(existsSync(join(installed, "better-sqlite3", "build", "Release", "better_sqlite3.node"))).toBe(false);
      expect(existsSync(join(installed, "@opencode-ai", "plugin"))).toBe(false);

      // What OpenCode installed for the tarball is what it would have installed for the bare name: reuse it offline.
      await world.server.stop();
      renameSync(installedRoot, join(packages, `${NAME}@latest`));
      await world.startServer({ pluginSpec: NAME });
      const second = await world.session("basic");
      await world.prompt(second, "scenario: basic");
      await world.waitForAudit(second, "injected", 60_000);
      expect(world.injections(second)).toMatchObject([{ status: "sent" }]);
      expect(world.server.output()).not.toContain("Failed to load plugin");
    },
  );

  it(
    "installed by `npm install <tarball>` in OpenCode's config folder, is loaded from there by a relative path in its opencode.json, and by a file in its plugins/ that imports it, and continues a session both times",
    { timeout: 240_000 },
    async () => {
      // OpenCode's config folder as a user leaves it: npm's install (scripts and all), nothing of OpenCode's yet.
      const installed = new E2E(script, false, { env: packed.env, seed: false });
      inConfig = installed;
      const configDir = join(installed.root, "home", "config", "opencode");
      mkdirSync(configDir, { recursive: true });
      await new UserShell().npm(configDir, "install", packed.tarball);
      const writeConfig = (config: Record<string, unknown>) =>
        writeFileSync(
          join(configDir, "opencode.json"),
          JSON.stringify({ $schema: "https://opencode.ai/config.json", ...config }),
        );
      // A path relative to the config file that names it; OpenCode takes the entry from the package's exports.
      writeConfig({ plugin: [[`./node_modules/${NAME}`, { databasePath: installed.dbPath }]] });
      await installed.start();
      await installed.continuedBasicSession();
      // OpenCode installed its own @opencode-ai/plugin beside the package and kept it; it fetched nothing by name.
      expect(existsSync(join(configDir, "node_modules", "@opencode-ai", "plugin", "package.json"))).toBe(true);
      const packages = join(installed.root, "home", "cache", "opencode", "packages");
      const fetched = existsSync(packages) ? readdirSync(packages).filter((p) => p.startsWith(NAME)) : [];
      expect(fetched).toEqual([]);

      // A plugin file of the config folder, which Bun resolves the package from (its options are the file's).
      await installed.server.stop();
      writeConfig({});
      mkdirSync(join(configDir, "plugins"));
      writeFileSync(
        join(configDir, "plugins", "todo-continuation.js"),
        `import TodoContinuation from "${NAME}";\n` +
          `export default (input) => TodoContinuation(input, ${JSON.stringify({ databasePath: installed.dbPath })});\n`,
      );
      await installed.startServer();
      const second = await installed.continuedBasicSession();
      expect(installed.injections(second)).toMatchObject([{ status: "sent" }]);
      expect(installed.server.output()).not.toContain("failed to load plugin");
    },
  );
});
