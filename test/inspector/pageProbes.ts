// What inspector.browser.test.ts measures in the inspector page. Most are page-side source text, run with
// page.evaluate: this project's tsconfig has no DOM types.

export interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export interface ChartLabels {
  count: number;
  /** The smallest label's font size as drawn, in CSS pixels, and the page's own text size. */
  smallestPx: number;
  pagePx: number;
  overlaps: string[];
}

export function inside(inner: Box, outer: Box): boolean {
  return (
    inner.left >= outer.left &&
    inner.right <= outer.right &&
    inner.top >= outer.top &&
    inner.bottom <= outer.bottom
  );
}

export const MEASURE_LABELS = `(() => {
  const svg = document.querySelector('[data-testid="diagram"] svg');
  const drawn = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const labels = [...svg.querySelectorAll(".nodeLabel, .edgeLabel")]
    .filter((e) => e.textContent.trim() !== "" && !e.parentElement.closest(".nodeLabel, .edgeLabel"))
    .map((e) => ({ text: e.textContent.trim(), box: e.getBoundingClientRect(), px: parseFloat(getComputedStyle(e).fontSize) * drawn }));
  const overlaps = [];
  labels.forEach((a, i) => labels.slice(i + 1).forEach((b) => {
    const x = Math.min(a.box.right, b.box.right) - Math.max(a.box.left, b.box.left);
    const y = Math.min(a.box.bottom, b.box.bottom) - Math.max(a.box.top, b.box.top);
    if (x > 1 && y > 1) overlaps.push(a.text + " | " + b.text);
  }));
  return {
    count: labels.length,
    smallestPx: Math.min(...labels.map((l) => l.px)),
    pagePx: parseFloat(getComputedStyle(document.body).fontSize),
    overlaps,
  };
})()`;

export const NESTED_BOXES = `(() => {
  const box = (e) => { const r = e.getBoundingClientRect(); return { left: r.left, top: r.top, right: r.right, bottom: r.bottom }; };
  const diagram = document.querySelector('[data-testid="diagram"]');
  return {
    outer: box(diagram.querySelector('[data-state-id="awaitingResponse"]')),
    inner: [...diagram.querySelectorAll('[data-state-id^="awaitingResponse__"]')]
      .map((e) => ({ id: e.getAttribute("data-state-id"), ...box(e) })),
  };
})()`;

export const LIFELINE_CENTRES = `(() => Object.fromEntries([...document.querySelectorAll('[data-testid="lifeline"]')]
  .map((e) => { const r = e.getBoundingClientRect(); return [e.getAttribute("data-session-id"), r.left + r.width / 2]; })))()`;

/** Where an event's arrow starts and ends on the screen (x), from its drawn line. */
export function ARROW_ENDS(row: unknown): { from: number; to: number } {
  const g = row as {
    querySelector(s: string): { getBoundingClientRect(): Box } | null;
    dataset: { x1?: string; x2?: string };
  };
  const line = g.querySelector("line.arrow")?.getBoundingClientRect();
  if (line === undefined) throw new Error("the event has no arrow");
  const rightward = Number(g.dataset.x2) > Number(g.dataset.x1);
  return rightward ? { from: line.left, to: line.right + 3 } : { from: line.right, to: line.left - 3 };
}

export const LATEST_IN_VIEW = `(() => {
  const rows = document.querySelectorAll('[data-testid="event"]');
  const last = rows[rows.length - 1].getBoundingClientRect();
  const view = document.querySelector('[data-testid="event-log"]').getBoundingClientRect();
  return last.top >= view.top && last.bottom <= view.bottom + 1;
})()`;
