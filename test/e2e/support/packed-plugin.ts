// The package as `npm pack` makes it, for the tests that install it the way users do.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../../crash/processes.js";
import { npm, npmCacheEnv } from "./user-install.js";

export const NAME = "opencode-todo-continuation";

export class PackedPlugin {
  private readonly folder = mkdtempSync(join(tmpdir(), "tc-pack-"));
  tarball = "";
  /** OpenCode's installer reads npm's settings: let it use this machine's npm cache, which `npm install` filled. */
  readonly env = npmCacheEnv();

  /**
   * Packs the build as it is: `prepack` would build again, removing dist/ under the tests that run beside this one,
   * so the build must exist (npm test builds before it tests).
   */
  pack(): void {
    if (!existsSync(join(ROOT, "dist", "index.js")))
      throw new Error("the package is not built: run `npm run build` (npm test does)");
    execFileSync(npm, ["pack", "--ignore-scripts", "--pack-destination", this.folder], { cwd: ROOT, stdio: "ignore" });
    this.tarball = join(
      this.folder,
      readdirSync(this.folder).find((f) => f.endsWith(".tgz"))!,
    );
  }

  dispose(): void {
    rmSync(this.folder, { recursive: true, force: true });
  }
}
