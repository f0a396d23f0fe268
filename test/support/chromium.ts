// Headless Chromium for the tests that open a page: Debian's package (/usr/bin/chromium), driven by
// playwright-core. Without it a test is skipped with the reason on a developer's machine and fails in
// CI, which installs it (.ci/run).
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, beforeEach } from "vitest";

const CHROMIUM = "/usr/bin/chromium";
const HAS_CHROMIUM = existsSync(CHROMIUM);

/** Call inside a `describe`: starts one browser for its tests and closes it after them. */
export function useChromium(): () => Browser {
  let browser: Browser | undefined;
  beforeEach((ctx) => {
    if (HAS_CHROMIUM) return;
    if (process.env.CI) {
      throw new Error(
        `${CHROMIUM} is missing: CI must install Debian's chromium (.ci/run does) before the tests`,
      );
    }
    ctx.skip(`${CHROMIUM} is missing (apt-get install chromium to run it)`);
  });
  beforeAll(async () => {
    if (!HAS_CHROMIUM) return;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
      ],
    });
  }, 15_000);
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (browser === undefined) throw new Error("chromium did not start");
    return browser;
  };
}
