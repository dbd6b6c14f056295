// The install the README gives a user who clones: `git clone`, `npm install` (install scripts and all), `npm run build`,
// then OpenCode's config names the build by its file:// URL. Run on a clone of this repository's committed HEAD.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { E2E } from "./support/harness.js";
import { UserShell } from "./support/user-install.js";
import { script } from "./scenarios.js";

describe("a clone of the repository", () => {
  const shell = new UserShell();
  let world: E2E | undefined;
  afterAll(() => world?.stop());

  it(
    "installs with `npm install`, builds with `npm run build`, and its dist/index.js, named by file:// URL, continues a session",
    { timeout: 300_000 },
    async () => {
      const clone = await shell.cloneHead();
      await shell.npm(clone, "install");
      await shell.npm(clone, "run", "build");
      // The lockfile is in step with package.json (npm install rewrote nothing) and the build writes only ignored files.
      expect(await shell.git(clone, "status", "--porcelain")).toBe("");

      world = new E2E(script, {}, { pluginSpec: pathToFileURL(join(clone, "dist", "index.js")).href });
      await world.start();
      const session = await world.continuedBasicSession();
      expect(world.injections(session)).toMatchObject([{ status: "sent" }]);
      expect(world.server.output()).not.toContain("failed to load plugin");
    },
  );
});
