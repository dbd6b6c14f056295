// The page in a real browser (Chromium, driven by Playwright) over the SQLite file of a real `opencode serve` whose
// plugin continues sessions of the scripted model: the list shows each session in its true state, an armed countdown
// appears without a reload and counts down, Stop on the page stops the real session before its continuation, Allow on
// the page lets a session stopped by its budget go on, a title that is markup is shown as text, and an action without
// the page's token is refused. TC_SCREENSHOTS=1 (npm run docs:screenshots) also saves the pictures of docs/dashboard.md.
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Dashboard } from "../../src/dashboard/server.js";
import { openStore } from "../../src/store/open/open.js";
import type { OperatorStore } from "../../src/store/operator/operator.js";
import { listenHttp, type StatusServer } from "../../src/service/status-server.js";
import { ROOT } from "../crash/processes.js";
import { launchBrowser } from "../support/browser.js";
import { E2E } from "./support/harness.js";
import { script } from "./scenarios.js";

const XSS = "<img src=x onerror=alert(1)>";
const SCREENSHOTS = process.env.TC_SCREENSHOTS === "1" ? join(ROOT, "docs", "images") : undefined;

describe("the page in a real browser, over a real OpenCode's database", () => {
  // Long enough to see a countdown and press Stop during it; one continuation of budget.
  const world = new E2E(script, { countdownSeconds: 6, maxContinuations: 1 });
  let store: OperatorStore;
  let dashboard: Dashboard;
  let server: StatusServer;
  let browser: Browser;
  let page: Page;
  const alerts: string[] = [];

  beforeAll(async () => {
    await world.start();
    store = await openStore(world.dbPath);
    dashboard = new Dashboard({ store, database: world.dbPath, dailyCap: 5 });
    server = await listenHttp({ host: "127.0.0.1", port: 0 }, async (req, res) => {
      if (!(await dashboard.handle(req, res))) res.writeHead(404).end();
    });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on("dialog", (dialog) => {
      alerts.push(dialog.message());
      void dialog.dismiss();
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    dashboard?.close();
    await server?.close();
    await store?.close();
    await world.stop();
  });

  const line = (sessionId: string) => page.locator(`[data-session="${sessionId}"]`);
  const stateOf = (sessionId: string) => line(sessionId).locator("[data-state]").getAttribute("data-state");

  it("lists a finished session as done and a title that is markup as its text", async () => {
    const done = await world.session("Write the parser");
    await world.prompt(done, "scenario: basic");
    await world.waitForAudit(done, "skipped:todos_complete", 30_000);
    const marked = await world.session(XSS);
    await world.prompt(marked, "scenario: complete");
    await world.waitFor(
      "the markup title written",
      () => world.rows("SELECT 1 FROM sessions WHERE title = ?", XSS).length > 0,
    );
    await page.goto(`${server.url}/`);
    expect(await stateOf(done)).toBe("done");
    expect(await line(done).locator(".title a").textContent()).toBe("Write the parser");
    expect(await line(marked).locator(".title a").textContent()).toBe(XSS);
    expect(await page.locator("main img").count()).toBe(0);
    expect(alerts).toEqual([]);
  });

  it("shows an armed countdown without a reload, counting down; Stop on its page stops the real session", async () => {
    await page.goto(`${server.url}/`);
    const id = await world.session("Count me down");
    await world.prompt(id, "scenario: basic");
    const armed = await world.waitForAudit(id, "armed", 30_000);
    await page.waitForSelector(`[data-session="${id}"] [data-state="counting"]`, { timeout: 10_000 });
    console.log(`dashboard e2e: the armed countdown shown ${Date.now() - armed.at} ms after its row`);
    const seconds = async () => Number((await line(id).locator("[data-until]").textContent())?.replace("s", ""));
    const first = await seconds();
    await expect.poll(seconds, { timeout: 5000 }).toBeLessThan(first);
    await page.click(`[data-session="${id}"] .title a`);
    await page.click('button[data-action="stop"]');
    await page.waitForSelector('.flash[role="status"]');
    expect(await page.locator(".flash").textContent()).toContain("Stopped");
    await world.waitForAudit(id, "stopped:dashboard");
    await world.waitForAudit(id, "cancelled:stopped");
    expect(world.injections(id)).toEqual([]);
  });

  it("Allow on the page lets a session stopped by its budget go on", async () => {
    const id = await world.session("Keep working");
    await world.prompt(id, "scenario: stagnation");
    await world.waitForAudit(id, "skipped:budget_exhausted", 40_000);
    await page.goto(`${server.url}/?filter=needs`);
    expect(await line(id).locator("[data-state]").textContent()).toContain("needs you: budget");
    await page.click(`[data-session="${id}"] .title a`);
    await page.click('button[data-action="allow"]');
    await world.waitForAudit(id, "unstopped:dashboard");
    await world.waitFor("the second continuation", () => world.injections(id).length === 2, 40_000);
  });

  it("refuses an action without the page's token", async () => {
    const [sessionId] = world
      .rows<{ session_id: string }>("SELECT session_id FROM sessions LIMIT 1")
      .map((r) => r.session_id);
    const refused = await page.request.post(`${server.url}/session/${sessionId}/stop`, {
      form: { csrf: "not-the-page-token" },
      maxRedirects: 0,
    });
    expect(refused.status()).toBe(403);
    expect(world.audit(sessionId!).filter((r) => r.event === "stopped")).toEqual([]);
  });

  it.runIf(SCREENSHOTS)("takes the pictures of docs/dashboard.md, wide and at a phone's width", async () => {
    for (const [name, width, height] of [
      ["wide", 1280, 800],
      ["phone", 390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      await page.goto(`${server.url}/`);
      await page.screenshot({ path: join(SCREENSHOTS!, `dashboard-overview-${name}.png`), fullPage: true });
      await page.click(".session .title a");
      await page.screenshot({ path: join(SCREENSHOTS!, `dashboard-session-${name}.png`), fullPage: true });
      await page.goto(`${server.url}/charts`);
      await page.screenshot({ path: join(SCREENSHOTS!, `dashboard-charts-${name}.png`), fullPage: true });
    }
  });
});
