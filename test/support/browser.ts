// A real Chromium for the page's tests: the build that @sparticuz/chromium ships inside its npm package (so npm test
// needs nothing from the system), unpacked once per checkout under .tmp/, driven by Playwright. It runs offline: no
// background networking, no component updates, no sign-in, nothing but the loopback page under test.
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium as playwright, type Browser } from "playwright-core";
import { ROOT } from "../crash/processes.js";

const UNPACKED = join(ROOT, ".tmp", "chromium");

/** The browser unpacked whole before it is used: a run killed while unpacking leaves a folder the next one ignores. */
async function unpacked(): Promise<string> {
  if (existsSync(join(UNPACKED, "ready"))) return UNPACKED;
  const { default: chromium } = await import("@sparticuz/chromium");
  mkdirSync(join(ROOT, ".tmp"), { recursive: true });
  const staging = mkdtempSync(join(ROOT, ".tmp", "chromium-unpacking-"));
  const saved = { TMPDIR: process.env.TMPDIR, FONTCONFIG_PATH: process.env.FONTCONFIG_PATH };
  process.env.TMPDIR = staging;
  try {
    await chromium.executablePath();
  } finally {
    for (const [key, value] of Object.entries(saved))
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
  }
  // Its font configuration names the folder Lambda unpacks to: this one's, once it is in place.
  writeFileSync(
    join(staging, "fonts", "fonts.conf"),
    `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig><dir>${join(UNPACKED, "fonts")}</dir>` +
      `<cachedir>${join(UNPACKED, "fonts-cache")}</cachedir><config></config></fontconfig>\n`,
  );
  writeFileSync(join(staging, "ready"), "");
  try {
    renameSync(staging, UNPACKED);
  } catch {
    // Another test process unpacked it first: theirs is as good.
    rmSync(staging, { recursive: true, force: true });
  }
  return UNPACKED;
}

export async function launchBrowser(): Promise<Browser> {
  const folder = await unpacked();
  const { default: chromium } = await import("@sparticuz/chromium");
  return playwright.launch({
    executablePath: join(folder, "chromium"),
    headless: true,
    env: { ...process.env, FONTCONFIG_PATH: join(folder, "fonts"), HOME: folder },
    args: [
      ...chromium.args,
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-quic",
      "--no-first-run",
    ],
  });
}
