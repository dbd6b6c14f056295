// The package's TUI module as users get it: `npm pack`, installed by OpenCode's TUI from the tarball, loaded by its
// bare npm name, and seen working in the real TUI (driven in tmux).
import { cpSync, existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { NAME, PackedPlugin } from "./support/packed-plugin.js";
import { TuiWorld } from "./support/tui.js";
import { script } from "./scenarios.js";

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
