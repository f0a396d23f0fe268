import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";
import { createActor, createMachine } from "xstate";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startInspectorServer, type InspectorServer } from "../../src/inspector/InspectorServer.js";
import { type A2ARuntime, createA2ARuntime } from "../../src/index.js";
import {
  BOTS,
  FakeDiscord,
  FakeGateway,
  runtimeConfig,
  tempStateDir,
  waitUntil,
} from "../support/runtimeFakes.js";
import { tempDir } from "../support/tempDir.js";

// The offline inspector page in a real browser (Debian's chromium, driven by playwright-core): a live
// runtime's actors appear in the list, the selected one's statechart is drawn by Mermaid with its current
// state highlighted, and the highlight follows the state.
//
// The test takes a screenshot into a temp dir, so a test run never changes the checkout. To refresh the
// README's docs/inspector.png from it:
//   A2A_UPDATE_SCREENSHOTS=1 npx vitest run test/inspector/inspector.browser.test.ts

const CHROMIUM = "/usr/bin/chromium";
const HAS_CHROMIUM = existsSync(CHROMIUM);
const DOCS_SCREENSHOT = join(dirname(fileURLToPath(import.meta.url)), "../../docs/inspector.png");
const UPDATE_SCREENSHOTS = process.env.A2A_UPDATE_SCREENSHOTS === "1";
const WAIT = { timeout: 8_000 };

describe("the inspector page in chromium", () => {
  let browser: Browser | undefined;
  let page: Page | undefined;
  let server: InspectorServer | undefined;
  let runtime: A2ARuntime | undefined;

  // Without chromium: skipped with the reason on a developer's machine, failed in CI (which installs it).
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

  afterEach(async () => {
    await page?.close();
    await runtime?.stop();
    await server?.close();
    page = runtime = server = undefined;
  });

  afterAll(async () => {
    await browser?.close();
  });

  it("lists a collaboration's actors, highlights its current state, and follows it to responded", async () => {
    if (browser === undefined) throw new Error("chromium did not start");
    server = await startInspectorServer();
    const discord = new FakeDiscord();
    runtime = createA2ARuntime({
      stateDir: tempStateDir("a2a-inspector-"),
      config: runtimeConfig,
      gateway: new FakeGateway(),
      discord,
      inspect: server.inspect,
      onWarning: () => {},
    });
    await runtime.start();

    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const origin = new URL(server.url).origin;
    const outside: string[] = [];
    const problems: string[] = [];
    page.on("request", (request) => {
      if (new URL(request.url()).origin !== origin) outside.push(request.url());
    });
    page.on("pageerror", (error) => problems.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    await page.goto(server.url);
    await page.waitForSelector('[data-testid="connection"][data-state="open"]', WAIT);
    await expect(page.locator("h1").textContent()).resolves.toBe("a2a-statecharts inspector");

    const sent = await runtime.discordSend({
      fromAgentId: "ruda",
      targetAgentId: "eden",
      message: "코드 리뷰 해줘",
    });
    expect(sent.status).toBe("sent");
    if (sent.status !== "sent") return;

    // The collaboration waits for eden's answer; its mention child is pending.
    const collaboration = page.locator(
      '[data-testid="actor"][data-machine="collaborate"][data-state="awaitingResponse"]',
    );
    await collaboration.waitFor(WAIT);
    const actorId = await collaboration.getAttribute("data-actor-id");
    const sessionId = await collaboration.getAttribute("data-session-id");
    expect(actorId).toMatch(/\S/);
    await page
      .locator(`[data-testid="actor"][data-machine="mention"][data-actor-id="mention"][data-state="pending"]`)
      .waitFor(WAIT);

    await collaboration.click();
    const diagram = page.locator('[data-testid="diagram"]');
    await page.waitForSelector(
      `[data-testid="diagram"][data-session-id="${sessionId}"][data-current-state="awaitingResponse"]`,
      WAIT,
    );
    const highlighted = () =>
      diagram
        .locator("svg g.current")
        .evaluateAll((nodes) => nodes.map((n) => n.getAttribute("data-state-id")));
    await expect(highlighted()).resolves.toEqual(["awaitingResponse"]);
    // The highlighted node is the state the diagram labels awaitingResponse, and it is drawn highlighted.
    const current = diagram.locator('svg g.current[data-state-id="awaitingResponse"]');
    await expect(current.textContent()).resolves.toContain("awaitingResponse");
    const fill = await current
      .locator("rect, path, polygon")
      .first()
      .evaluate((shape) => {
        // Runs in the page (this project's tsconfig has no DOM types).
        const view = globalThis as unknown as { getComputedStyle(e: unknown): { fill: string } };
        return view.getComputedStyle(shape).fill;
      });
    expect(fill).toBe("rgb(253, 230, 138)");
    await page.locator('[data-testid="event"][data-type="xstate.init"]').first().waitFor(WAIT);
    const screenshot = UPDATE_SCREENSHOTS
      ? DOCS_SCREENSHOT
      : join(tempDir("a2a-screenshot-"), "inspector.png");
    await page.screenshot({ path: prepare(screenshot) });
    expect(statSync(screenshot).size).toBeGreaterThan(0);

    // eden answers in the thread: the mention ends responded, and so does the collaboration.
    await runtime.handleDiscordMessage({
      messageId: "1400000000000000801",
      channelId: sent.threadId,
      threadId: sent.threadId,
      authorId: BOTS.eden,
      authorIsBot: true,
      content: "확인했습니다, 두 군데 고쳐 주세요",
      mentionUserIds: [BOTS.ruda],
      ts: Date.now(),
    });
    await waitUntil(async () => (await runtime?.mentions())?.[0]?.status === "responded", "responded");
    await page.waitForSelector(
      `[data-testid="diagram"][data-session-id="${sessionId}"][data-current-state="responded"]`,
      WAIT,
    );
    await expect(highlighted()).resolves.toEqual(["responded"]);
    await page
      .locator(`[data-testid="actor"][data-session-id="${sessionId}"][data-status="done"]`)
      .waitFor(WAIT);
    await page.locator('[data-testid="event"][data-type="RESPONSE_RECEIVED"]').first().waitFor(WAIT);

    expect(outside).toEqual([]);
    expect(problems).toEqual([]);
  }, 15_000);

  it("maps nested, parallel and keyword-named states to their drawn nodes", async () => {
    if (browser === undefined) throw new Error("chromium did not start");
    server = await startInspectorServer();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(server.url);
    await page.waitForSelector('[data-testid="connection"][data-state="open"]', WAIT);
    const actor = createActor(NESTED, { id: "nested-1", inspect: server.inspect }).start();
    try {
      await page.locator('[data-testid="actor"][data-actor-id="nested-1"]').click(WAIT);
      const expectHighlight = async (state: string, current: string[], active: string[]) => {
        await page?.waitForSelector(`[data-testid="diagram"][data-current-state="${state}"]`, WAIT);
        const marked = (cls: string) =>
          page
            ?.locator(`[data-testid="diagram"] svg g.${cls}`)
            .evaluateAll((nodes) => nodes.map((n) => n.getAttribute("data-state-id")).sort());
        await expect(marked("current")).resolves.toEqual([...current].sort());
        await expect(marked("active")).resolves.toEqual([...active].sort());
      };
      await expectHighlight("phase.start", ["phase_start_"], ["phase"]);
      actor.send({ type: "NEXT" });
      await expectHighlight("phase.end", ["phase_end_"], ["phase"]);
      actor.send({ type: "NEXT" });
      await expectHighlight(
        "state.left.a, state.right.c",
        ["state_left_a", "state_right_c"],
        ["state_", "state_left", "state_right"],
      );
      actor.send({ type: "FLIP" });
      await expectHighlight(
        "state.left.b, state.right.c",
        ["state_left_b", "state_right_c"],
        ["state_", "state_left", "state_right"],
      );
    } finally {
      actor.stop();
    }
  }, 15_000);
});

/** Nested, parallel, and states whose Mermaid ids toMermaid suffixes (`state`, `…_start`, `…_end`). */
const NESTED = createMachine({
  id: "nested",
  initial: "phase",
  states: {
    phase: {
      initial: "start",
      states: { start: { on: { NEXT: "end" } }, end: { on: { NEXT: "#nested.state" } } },
    },
    state: {
      type: "parallel",
      states: {
        left: { initial: "a", states: { a: { on: { FLIP: "b" } }, b: {} } },
        right: { initial: "c", states: { c: {}, d: {} } },
      },
    },
  },
});

function prepare(path: string): string {
  mkdirSync(dirname(path), { recursive: true });
  return path;
}
