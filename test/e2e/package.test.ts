// The package as users get it: `npm pack`, installed by OpenCode's own installer (which never runs install scripts,
// so better-sqlite3 stays unbuilt) and then loaded by its bare npm name.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../crash/processes.js";
import { E2E } from "./support/harness.js";
import { TuiWorld } from "./support/tui.js";
import { script } from "./scenarios.js";

const NAME = "opencode-todo-continuation";
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

describe("the packed plugin", () => {
  const packDir = mkdtempSync(join(tmpdir(), "tc-pack-"));
  let tarball = "";
  // OpenCode's installer reads npm's settings: let it use this machine's npm cache, which `npm ci` filled.
  const npmCache = execFileSync(npm, ["config", "get", "cache"], { encoding: "utf8" }).trim();
  let world: E2E | undefined;
  const tuis: TuiWorld[] = [];

  beforeAll(() => {
    execFileSync(npm, ["pack", "--pack-destination", packDir], { cwd: ROOT, stdio: "ignore" });
    tarball = join(
      packDir,
      readdirSync(packDir).find((f) => f.endsWith(".tgz"))!,
    );
  }, 120_000);
  afterAll(async () => {
    await world?.stop();
    for (const tui of tuis) await tui.stop();
    rmSync(packDir, { recursive: true, force: true });
  });

  it(
    "is installed by OpenCode from the tarball, then loaded by its npm name, and continues a session both times",
    { timeout: 240_000 },
    async () => {
      const env = { npm_config_cache: npmCache, npm_config_prefer_offline: "true" };
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
    "its TUI module (exports ./tui): installed by OpenCode from the tarball, loaded by its npm name, draws its panel and cancels with Esc",
    { timeout: 240_000 },
    async () => {
      const env = { npm_config_cache: npmCache, npm_config_prefer_offline: "true" };
      // OpenCode's TUI installs the tarball like any npm plugin. (It does not load a TUI module from a `name@file:…tgz`
      // install folder in 1.18.33: its import mapping for TUI plugins misses that folder. By name it does.)
      const installer = new TuiWorld(script, { tuiSpec: `${NAME}@file:${tarball}`, env });
      tuis.push(installer);
      await installer.start(120_000);
      const installedRoot = join(installer.packages, `${NAME}@file:${tarball}`);
      await installer.until(
        "OpenCode's install of the tarball",
        () => existsSync(join(installedRoot, "node_modules", NAME, "dist", "tui", "index.js")),
        60_000,
      );

      const byName = new TuiWorld(script, {
        tuiSpec: NAME,
        env,
        server: { countdownSeconds: 30 },
        // What OpenCode installed for the tarball is what it would install for the bare name: reuse it, offline.
        prepare: (home) =>
          cpSync(installedRoot, join(home, "cache", "opencode", "packages", `${NAME}@latest`), { recursive: true }),
      });
      tuis.push(byName);
      await byName.start(120_000);
      await byName.say("scenario: tui");
      await byName.waitScreen(
        "the panel of the plugin loaded by name",
        (s) => /Todo continuation\s*\n.*continuing in \d+s · esc cancels/.test(s),
        60_000,
      );
      byName.keys("Escape");
      await byName.waitScreen("the cancel by the plugin loaded by name", (s) => s.includes("cancelled by you"), 10_000);
    },
  );
});
