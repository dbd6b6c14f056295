// The package's TUI module as users get it: `npm pack`, installed by OpenCode's TUI from the tarball, loaded by its
// bare npm name; or installed by the user's `npm install <tarball>` in OpenCode's config folder and named there by a
// relative path in tui.json. Seen working in the real TUI (driven in tmux) both times.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NAME, PackedPlugin } from "./support/packed-plugin.js";
import { TuiWorld } from "./support/tui.js";
import { UserShell } from "./support/user-install.js";
import { script } from "./scenarios.js";

/**
 * Starts OpenCode's TUI in `world` and sends the scripted turn: the countdown (armed by the server plugin) shows in the
 * panel (drawn by the TUI module), and Esc cancels it there. Resolves with the session.
 */
async function countsDownAndCancels(world: TuiWorld, whose: string): Promise<string> {
  await world.start(120_000);
  await world.say("scenario: tui");
  await world.waitScreen(
    `the panel of ${whose}`,
    (s) => /Todo continuation\s*\n.*continuing in \d+s · esc cancels/.test(s),
    60_000,
  );
  world.keys("Escape");
  await world.waitScreen(`the cancel by ${whose}`, (s) => s.includes("cancelled by you"), 10_000);
  return world.sessionId()!;
}

describe("the packed plugin", () => {
  const packed = new PackedPlugin();
  const tuis: TuiWorld[] = [];

  beforeAll(() => packed.pack(), 120_000);
  afterAll(async () => {
    for (const tui of tuis) await tui.stop();
    packed.dispose();
  });

  it(
    "its TUI module (exports ./tui): installed by OpenCode from the tarball, loaded by its npm name, draws its panel and cancels with Esc",
    { timeout: 240_000 },
    async () => {
      const { env, tarball } = packed;
      // OpenCode's TUI installs the tarball like any npm plugin. (It does not load a TUI module from a `name@file:…tgz`
      // install folder in 1.18.33: its import mapping for TUI plugins misses that folder. By name it does.)
      const installer = new TuiWorld(script, { tuiSpec: `${NAME}@file:${tarball}`, env });
      tuis.push(installer);
      await installer.start(120_000);
      const installedRoot = join(installer.packages, `${NAME}@file:${tarball}`);
      await installer.waitFor(
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
      await countsDownAndCancels(byName, "the plugin loaded by name");
    },
  );

  it(
    "its TUI module, installed by `npm install <tarball>` in OpenCode's config folder and named there by a relative path in tui.json (the server plugin by the same path in opencode.json): draws its panel and cancels with Esc",
    { timeout: 240_000 },
    async ({ onTestFailed }) => {
      // The package folder, relative to the config file that names it. OpenCode 1.18.33 resolves a path spec in tui.json
      // against that file's folder, and takes a TUI module from the package's exports["./tui"] (without it, and with no
      // index file at the package's root, it finds no TUI entry: the server plugin runs, and no panel is drawn).
      const spec = `./node_modules/${NAME}`;
      const world = new TuiWorld(script, { tuiSpec: spec, serverSpec: false, seed: false, env: packed.env });
      tuis.push(world);
      onTestFailed(() => console.error(world.diagnose()));
      const { configDir } = world;
      // OpenCode's config folder as a user leaves it: npm's install (scripts and all), nothing of OpenCode's yet.
      mkdirSync(configDir, { recursive: true });
      await new UserShell().npm(configDir, "install", packed.tarball);
      writeFileSync(
        join(configDir, "opencode.json"),
        JSON.stringify({
          $schema: "https://opencode.ai/config.json",
          plugin: [[spec, { databasePath: world.dbPath, countdownSeconds: 30 }]],
        }),
      );

      const session = await countsDownAndCancels(world, "the TUI module installed in the config folder");
      expect(world.rows("SELECT state, end_reason FROM countdowns WHERE session_id = ?", session)).toEqual([
        { state: "cancelled", end_reason: "user_key" },
      ]);

      // Both came from the config folder: OpenCode's TUI loaded the package folder npm installed there (its record of
      // the TUI plugins it loaded says so), and nothing was fetched by name.
      const loaded = JSON.parse(
        readFileSync(join(world.root, "home", "state", "opencode", "plugin-meta.json"), "utf8"),
      );
      const folder = pathToFileURL(join(configDir, "node_modules", NAME)).href;
      expect(loaded["todo-continuation"]).toMatchObject({ source: "file", spec: folder, target: folder });
      expect(existsSync(world.packages) ? readdirSync(world.packages).filter((p) => p.startsWith(NAME)) : []).toEqual(
        [],
      );
    },
  );
});
