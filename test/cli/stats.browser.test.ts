import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import type { StatsReport } from "../../src/cli/stats.js";
import { useChromium } from "../support/chromium.js";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/tempDir.js";

// `stats --html` over a demo run's state dir, opened in a real browser (Debian's chromium, driven by
// playwright-core): the charts are drawn with the run's data and the page's numbers are the JSON's.

// docs/stats.md shows the page; refresh it with A2A_UPDATE_SCREENSHOTS=1 npx vitest run test/cli/stats.browser.test.ts
const DOCS_SCREENSHOT = join(dirname(fileURLToPath(import.meta.url)), "../../docs/stats.png");
const UPDATE_SCREENSHOTS = process.env.A2A_UPDATE_SCREENSHOTS === "1";

describe("the stats page in chromium", () => {
  const browser = useChromium();

  it("draws the demo run's figures: latency histogram, mention outcomes over time, turns saved by intent", async () => {
    const dir = join(tempDir("a2a-stats-demo-"), "state");
    const demo = await runCli("demo", "--speed", "200", "--state-dir", dir);
    expect(demo.code, demo.err).toBe(0);

    const json = await runCli("stats", "--state-dir", dir, "--json");
    expect(json.code, json.err).toBe(0);
    const report = JSON.parse(json.out) as StatsReport;
    const t = report.totals;
    // The demo's scenarios: a rate-limited flow that retries once and answers, a blocked one, ...
    expect(t.retries.byCode.rate_limit?.count).toBeGreaterThanOrEqual(1);
    expect(t.flows.outcomes.ok).toBeGreaterThan(0);
    expect(t.flows.outcomes.blocked).toBeGreaterThan(0);
    // ... and mentions answered, reminded and one escalated after its 15 minutes.
    expect(t.mentions.escalated).toBe(1);
    expect(t.mentions.reminders).toBeGreaterThanOrEqual(2);
    expect(t.mentions.latencyMs.count).toBeGreaterThan(0);

    const file = join(tempDir("a2a-stats-html-"), "stats.html");
    const html = await runCli("stats", "--state-dir", dir, "--html", file);
    expect(html.code, html.err).toBe(0);

    const page = await browser().newPage({ viewport: { width: 1280, height: 900 } });
    try {
      const outside: string[] = [];
      const problems: string[] = [];
      page.on("request", (request) => {
        if (!request.url().startsWith("file:")) outside.push(request.url());
      });
      page.on("pageerror", (error) => problems.push(error.message));
      page.on("console", (message) => {
        if (message.type() === "error") problems.push(message.text());
      });
      await page.goto(pathToFileURL(file).href);
      await expect(page.locator("h1").textContent()).resolves.toBe("a2a-statecharts stats");

      for (const chart of ["latency", "timeline", "turns", "outcomes"]) {
        const bars = page.locator(`[data-chart="${chart}"] svg rect.bar`);
        expect(await bars.count(), chart).toBeGreaterThan(0);
        const boxes = await bars.evaluateAll((rects) =>
          rects.map((rect) => {
            const box = rect.getBoundingClientRect();
            return { width: box.width, height: box.height };
          }),
        );
        for (const box of boxes) {
          expect(box.width, chart).toBeGreaterThan(0);
          expect(box.height, chart).toBeGreaterThan(0);
        }
      }

      const valuesOf = async (chart: string, series?: string) =>
        page
          .locator(
            `[data-chart="${chart}"] svg rect.bar${series === undefined ? "" : `[data-series="${series}"]`}`,
          )
          .evaluateAll((rects) => rects.map((rect) => Number(rect.getAttribute("data-value"))));
      const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
      expect(sum(await valuesOf("latency"))).toBe(t.mentions.latencyMs.count);
      expect(sum(await valuesOf("timeline", "reminded"))).toBe(t.mentions.reminders);
      expect(sum(await valuesOf("timeline", "escalated"))).toBe(t.mentions.escalated);
      expect(sum(await valuesOf("timeline", "responded"))).toBe(t.mentions.responded);
      expect(sum(await valuesOf("turns", "turns saved"))).toBe(t.flows.saved);
      expect(sum(await valuesOf("turns", "turns run"))).toBe(t.flows.actual);

      const stat = (key: string) => page.locator(`[data-stat="${key}"]`).textContent();
      await expect(stat("flows")).resolves.toBe(String(t.flows.flows));
      await expect(stat("turnsSaved")).resolves.toBe(String(t.flows.saved));
      await expect(stat("llmCallsSaved")).resolves.toBe(String(t.flows.llmCalls.saved));
      await expect(stat("retries")).resolves.toBe(String(t.retries.total));
      await expect(stat("mentions")).resolves.toBe(String(t.mentions.sent));
      await expect(stat("responded")).resolves.toBe(String(t.mentions.responded));
      await expect(stat("escalated")).resolves.toBe(String(t.mentions.escalated));
      const agents = await page.locator("#by-agent tbody td:first-child").allTextContents();
      expect(agents).toEqual(Object.keys(report.byAgent));

      expect(outside).toEqual([]);
      expect(problems).toEqual([]);
      if (UPDATE_SCREENSHOTS) await page.screenshot({ path: DOCS_SCREENSHOT, fullPage: true });
    } finally {
      await page.close();
    }
  }, 90_000);
});
