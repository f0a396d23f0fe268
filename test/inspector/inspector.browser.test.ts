import { mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { type AnyStateMachine, createActor, createMachine, setup } from "xstate";
import { afterEach, describe, expect, it } from "vitest";
import { startInspectorServer, type InspectorServer } from "../../src/inspector/InspectorServer.js";
import { type A2ARuntime, createA2ARuntime } from "../../src/index.js";
import {
  a2aFlowMachine,
  collaborateMachine,
  mentionMachine,
  pingPongMachine,
  replyWaitMachine,
} from "../../src/machines/index.js";
import { BOTS, FakeDiscord, runtimeConfig, tempStateDir, waitUntil } from "../support/runtimeFakes.js";
import { ScriptedGateway } from "../../src/testing/index.js";
import { useChromium } from "../support/chromium.js";
import { tempDir } from "../support/tempDir.js";
import {
  ARROW_ENDS,
  type Box,
  type ChartLabels,
  inside,
  LATEST_IN_VIEW,
  LIFELINE_CENTRES,
  MEASURE_LABELS,
  NESTED_BOXES,
} from "./pageProbes.js";
import { textLogger } from "../../src/runtime/logger.js";

// The offline inspector page in a real browser (Debian's chromium, driven by playwright-core): a live
// runtime's actors appear in the list, the selected one's statechart is drawn by Mermaid with its current
// state highlighted, and the highlight follows the state.
//
// The test takes a screenshot into a temp dir, so a test run never changes the checkout. To refresh the
// README's docs/inspector.png from it:
//   A2A_UPDATE_SCREENSHOTS=1 npx vitest run test/inspector/inspector.browser.test.ts

const DOCS_SCREENSHOT = join(dirname(fileURLToPath(import.meta.url)), "../../docs/inspector.png");
const UPDATE_SCREENSHOTS = process.env.A2A_UPDATE_SCREENSHOTS === "1";
const WAIT = { timeout: 8_000 };

describe("the inspector page in chromium", () => {
  const browser = useChromium();
  let page: Page | undefined;
  let server: InspectorServer | undefined;
  let runtime: A2ARuntime | undefined;

  afterEach(async () => {
    await page?.close();
    await runtime?.stop();
    await server?.close();
    page = runtime = server = undefined;
  });

  it("lists a collaboration's actors, highlights its current state, and follows it to responded", async () => {
    server = await startInspectorServer();
    const discord = new FakeDiscord();
    runtime = createA2ARuntime({
      stateDir: tempStateDir("a2a-inspector-"),
      config: runtimeConfig,
      gateway: new ScriptedGateway(),
      discord,
      inspect: server.inspect,
      logger: textLogger(() => {}),
    });
    await runtime.start();

    page = await browser().newPage({ viewport: { width: 1440, height: 900 } });
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

    // Following the latest change, the page shows the mention inside its collaboration's chart.
    await page.waitForSelector(
      `[data-testid="diagram"][data-session-id="${sessionId}"][data-current-ids="awaitingResponse__pending"]`,
      WAIT,
    );
    await collaboration.click();
    const diagram = page.locator('[data-testid="diagram"]');
    await page.waitForSelector(
      `[data-testid="diagram"][data-session-id="${sessionId}"][data-current-state="awaitingResponse"]`,
      WAIT,
    );
    const highlighted = (cls = "current") =>
      diagram
        .locator(`svg g.${cls}`)
        .evaluateAll((nodes) => nodes.map((n) => n.getAttribute("data-state-id")).sort());
    // The mention runs inside awaitingResponse: its state is the current one, awaitingResponse is active.
    await expect(highlighted()).resolves.toEqual(["awaitingResponse__pending"]);
    await expect(highlighted("active")).resolves.toEqual(["awaitingResponse"]);
    const current = diagram.locator('svg g.current[data-state-id="awaitingResponse__pending"]');
    await expect(current.textContent()).resolves.toContain("pending");
    const fill = await current
      .locator("rect, path, polygon")
      .first()
      .evaluate((shape) => {
        // Runs in the page (this project's tsconfig has no DOM types).
        const view = globalThis as unknown as { getComputedStyle(e: unknown): { fill: string } };
        return view.getComputedStyle(shape).fill;
      });
    expect(fill).toBe("rgb(253, 230, 138)");

    // At the default size the labels are as large as the page's text and none covers another.
    const labels = await page.evaluate<ChartLabels>(MEASURE_LABELS);
    expect(labels.count).toBeGreaterThan(40);
    expect(labels.smallestPx).toBeGreaterThanOrEqual(labels.pagePx);
    expect(labels.overlaps).toEqual([]);
    // The mention's states are drawn inside awaitingResponse's box.
    const nesting = await page.evaluate<{ outer: Box; inner: Array<Box & { id: string }> }>(NESTED_BOXES);
    expect(nesting.inner.map((b) => b.id)).toEqual(
      expect.arrayContaining([
        "awaitingResponse__pending",
        "awaitingResponse__reminded",
        "awaitingResponse__escalated",
      ]),
    );
    for (const box of nesting.inner) expect(inside(box, nesting.outer), box.id).toBe(true);

    // The sequence view: xstate.init goes from the collaboration's lifeline to the mention's, latest at the bottom.
    const init = page.locator(
      `[data-testid="event"][data-type="xstate.init"][data-source-session-id="${sessionId}"][data-target="mention"]`,
    );
    await init.waitFor(WAIT);
    const lanes = await page.evaluate<Record<string, number>>(LIFELINE_CENTRES);
    const arrow = await init.evaluate(ARROW_ENDS);
    const mentionSession = await page
      .locator('[data-testid="actor"][data-machine="mention"]')
      .getAttribute("data-session-id");
    expect(Math.abs(arrow.from - (lanes[sessionId ?? ""] ?? NaN))).toBeLessThan(4);
    expect(Math.abs(arrow.to - (lanes[mentionSession ?? ""] ?? NaN))).toBeLessThan(4);
    await expect(page.evaluate<boolean>(LATEST_IN_VIEW)).resolves.toBe(true);
    await init.click();
    // The whole input, pretty-printed: the preview is not cut.
    const data = await page.locator('[data-testid="event-data"]').textContent();
    expect(JSON.parse(data ?? "")).toMatchObject({ input: { fromAgentId: "ruda", targetAgentId: "eden" } });

    await page.locator('[data-testid="event"][data-type="xstate.init"]').first().waitFor(WAIT);
    const screenshot = UPDATE_SCREENSHOTS
      ? DOCS_SCREENSHOT
      : join(tempDir("a2a-screenshot-"), "inspector.png");
    await page.screenshot({ path: prepare(screenshot) });
    expect(statSync(screenshot).size).toBeGreaterThan(0);

    // The sequence shows the selected collaboration's family; "all actors" adds the others' events.
    const other = createActor(NESTED, { id: "other-1", inspect: server.inspect }).start();
    try {
      other.send({ type: "NEXT" });
      const others = page.locator('[data-testid="event"][data-target="other-1"]');
      await page.locator('[data-testid="all-events"]').check();
      await others.first().waitFor(WAIT);
      await page.locator('[data-testid="all-events"]').uncheck();
      await expect(others.count()).resolves.toBe(0);
      await expect(page.locator('[data-testid="event-scope"]').textContent()).resolves.toBe(
        `of ${actorId} and its children`,
      );
    } finally {
      other.stop();
    }

    // Zoom: the buttons, the wheel (around the pointer) and the keys change the viewBox.
    const viewBox = () => diagram.locator("svg").getAttribute("viewBox");
    const width = async () => Number((await viewBox())?.split(" ")[2]);
    const before = await width();
    await page.locator('[data-testid="zoom-in"]').click();
    expect(await width()).toBeCloseTo(before / 1.25, 3);
    await page.locator('[data-testid="zoom-fit"]').click();
    expect(Number(await diagram.getAttribute("data-zoom"))).toBeLessThan(1);
    const box = await diagram.boundingBox();
    if (box === null) throw new Error("the diagram is not laid out");
    // The chart point under the pointer stays under it while the wheel zooms in.
    // (On whole pixels: Chromium gives a wheel event's position in whole pixels.)
    const pointer = {
      x: Math.round(box.x + box.width * 0.3) - box.x,
      y: Math.round(box.y + box.height * 0.6) - box.y,
    };
    const under = async () => {
      const [x = NaN, y = NaN, w = NaN] = ((await viewBox()) ?? "").split(" ").map(Number);
      const unit = w / box.width;
      return { x: x + pointer.x * unit, y: y + pointer.y * unit };
    };
    await page.mouse.move(box.x + pointer.x, box.y + pointer.y);
    const fitted = await width();
    const point = await under();
    await page.mouse.wheel(0, -300);
    await expect.poll(width).toBeLessThan(fitted);
    const after = await under();
    expect(after.x).toBeCloseTo(point.x, 1);
    expect(after.y).toBeCloseTo(point.y, 1);
    // Dragging moves the chart with the pointer.
    const [dragX = NaN] = ((await viewBox()) ?? "").split(" ").map(Number);
    const unit = (await width()) / box.width;
    await page.mouse.down();
    await page.mouse.move(box.x + pointer.x + 100, box.y + pointer.y, { steps: 4 });
    await page.mouse.up();
    expect(Number((await viewBox())?.split(" ")[0])).toBeCloseTo(dragX - 100 * unit, 1);
    await diagram.focus();
    await page.keyboard.press("0");
    await expect(diagram.getAttribute("data-zoom")).resolves.toBe("1");
    const panned = await viewBox();
    await page.keyboard.press("ArrowRight");
    expect(await viewBox()).not.toBe(panned);

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
  }, 30_000);

  it("draws every machine of the library with labels as large as the page's text, none over another", async () => {
    const problems: string[] = [];
    ({ server, page } = await openInspector(browser(), (p) =>
      p.on("pageerror", (error) => problems.push(error.message)),
    ));
    // Never started: the inspector hears of each actor when it is created, which is all a chart needs.
    for (const machine of [
      collaborateMachine,
      a2aFlowMachine,
      mentionMachine,
      replyWaitMachine,
      pingPongMachine,
    ]) {
      createActor(machine as AnyStateMachine, { id: `chart-${machine.id}`, inspect: server.inspect });
      await page.locator(`[data-testid="actor"][data-actor-id="chart-${machine.id}"]`).click(WAIT);
      await page.waitForSelector(`[data-testid="diagram"][data-machine="${machine.id}"] svg`, WAIT);
      const labels = await page.evaluate<ChartLabels>(MEASURE_LABELS);
      expect(labels.count, machine.id).toBeGreaterThan(5);
      expect(labels.smallestPx, machine.id).toBeGreaterThanOrEqual(labels.pagePx);
      expect(labels.overlaps, machine.id).toEqual([]);
    }
    expect(problems).toEqual([]);
  }, 30_000);

  it("follows an invoked machine's change in its parent's chart, where the machine is drawn", async () => {
    ({ server, page } = await openInspector(browser()));
    const actor = createActor(HOLDER, { id: "holder-1", inspect: server.inspect }).start();
    try {
      const shown = (ids: string) =>
        page?.waitForSelector(
          `[data-testid="diagram"][data-actor-id="holder-1"][data-current-ids="${ids}"]`,
          WAIT,
        );
      await shown("running__a");
      // Only the child changes: the page still shows the parent's chart, the child's state marked in it.
      actor.getSnapshot().children.kid?.send({ type: "STEP" });
      await page.locator('[data-testid="actor"][data-actor-id="kid"][data-state="b"]').waitFor(WAIT);
      await shown("running__b");
      await expect(
        page
          .locator('[data-testid="diagram"] svg g.active')
          .evaluateAll((nodes) => nodes.map((n) => n.getAttribute("data-state-id"))),
      ).resolves.toEqual(["running"]);
    } finally {
      actor.stop();
    }
  }, 15_000);

  it("maps nested, parallel and keyword-named states to their drawn nodes", async () => {
    ({ server, page } = await openInspector(browser()));
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

/** A machine whose state invokes another, which moves on STEP by itself (as a mention's timers do). */
const HOLDER = setup({
  actors: {
    kid: createMachine({ id: "kid", initial: "a", states: { a: { on: { STEP: "b" } }, b: {} } }),
  },
}).createMachine({
  id: "holder",
  initial: "running",
  states: { running: { invoke: { id: "kid", src: "kid" } } },
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

/** A new inspector server and a page connected to it; `watch` sees the page before it loads. */
async function openInspector(
  browser: Browser,
  watch: (page: Page) => void = () => {},
): Promise<{ server: InspectorServer; page: Page }> {
  const server = await startInspectorServer();
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  try {
    watch(page);
    await page.goto(server.url);
    await page.waitForSelector('[data-testid="connection"][data-state="open"]', WAIT);
    return { server, page };
  } catch (error) {
    await page.close();
    await server.close();
    throw error;
  }
}

function prepare(path: string): string {
  mkdirSync(dirname(path), { recursive: true });
  return path;
}
