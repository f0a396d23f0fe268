// @ts-check
// Panning and zooming the inspector page's statechart by rewriting the drawn SVG's viewBox: wheel or pinch
// zooms around the pointer, dragging pans, the buttons and keys (+, -, 0 for 100%, f to fit, arrows to pan)
// do the rest.
import { byId } from "./dom.js";

const MIN_ZOOM = 0.1;
const MAX_ZOOM = 4;
/**
 * @typedef {object} View
 * @property {number} x The chart point at the view's top-left corner.
 * @property {number} y
 * @property {number} scale
 * @property {number} width The chart's natural size.
 * @property {number} height
 * @property {string | null} centered The session id of the actor whose current state was last brought into view.
 */

/** @type {View} */
export const view = { x: 0, y: 0, scale: 1, width: 0, height: 0, centered: null };

export function diagramSvg() {
  return byId("diagram").querySelector("svg");
}

export function applyView() {
  const svg = diagramSvg();
  const box = byId("diagram").getBoundingClientRect();
  if (!svg || box.width === 0) return;
  const w = box.width / view.scale;
  const h = box.height / view.scale;
  svg.setAttribute("viewBox", view.x + " " + view.y + " " + w + " " + h);
  byId("diagram").dataset.zoom = String(Math.round(view.scale * 1000) / 1000);
  byId("zoom-level").textContent = Math.round(view.scale * 100) + "%";
}

/**
 * Zooms to scale, keeping the chart point under (px, py) (pixels from the view's corner) where it is; the
 * view's centre without them.
 * @param {number} scale
 * @param {number} [px]
 * @param {number} [py]
 */
function zoomTo(scale, px, py) {
  const box = byId("diagram").getBoundingClientRect();
  const x = px ?? box.width / 2;
  const y = py ?? box.height / 2;
  const next = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, scale));
  const cx = view.x + x / view.scale;
  const cy = view.y + y / view.scale;
  view.scale = next;
  view.x = cx - x / next;
  view.y = cy - y / next;
  applyView();
}

/** @param {number} dx @param {number} dy */
function panBy(dx, dy) {
  view.x -= dx / view.scale;
  view.y -= dy / view.scale;
  applyView();
}

/** The whole chart in view, at most at 100%. */
function fit() {
  const box = byId("diagram").getBoundingClientRect();
  if (!view.width || box.width === 0) return;
  const pad = 16;
  view.scale = Math.max(
    MIN_ZOOM,
    Math.min(1, (box.width - 2 * pad) / view.width, (box.height - 2 * pad) / view.height),
  );
  view.x = (view.width - box.width / view.scale) / 2;
  view.y = (view.height - box.height / view.scale) / 2;
  applyView();
}

/** 100%, centred on the current state, or else on the chart's top. */
function actualSize() {
  const box = byId("diagram").getBoundingClientRect();
  view.scale = 1;
  const current = byId("diagram").querySelector("g.current");
  if (current) return reveal(current, true);
  view.x = (view.width - box.width) / 2;
  view.y = 0;
  applyView();
}

/**
 * Brings a drawn node into view when it is outside (or always with force): centred, but with the box
 * of its innermost active state shown from its top (title included) and its left edge, each when the
 * node still fits in view that way.
 * @param {Element} node
 * @param {boolean} force
 */
export function reveal(node, force) {
  if (!diagramSvg()) return;
  const box = byId("diagram").getBoundingClientRect();
  const r = node.getBoundingClientRect();
  const inside = r.left >= box.left && r.right <= box.right && r.top >= box.top && r.bottom <= box.bottom;
  if (inside && !force) return;
  const margin = 24;
  let dx = r.left + r.width / 2 - (box.left + box.width / 2);
  let dy = r.top + r.height / 2 - (box.top + box.height / 2);
  // A box larger than the view (a state holding others) is shown from its top-left corner.
  if (r.width > box.width - 2 * margin) dx = r.left - box.left - margin;
  if (r.height > box.height - 2 * margin) dy = r.top - box.top - margin;
  const parent = enclosingActive(node, r);
  if (parent) {
    const cdx = parent.left - box.left - margin;
    const cdy = parent.top - box.top - margin;
    if (r.right - cdx <= box.right - margin) dx = cdx;
    if (r.bottom - cdy <= box.bottom - margin) dy = cdy;
  }
  view.x += dx / view.scale;
  view.y += dy / view.scale;
  applyView();
}

/**
 * The smallest active state box drawn around a node's rectangle r, as a screen rectangle.
 * @param {Element} node
 * @param {DOMRect} r
 * @returns {DOMRect | null}
 */
function enclosingActive(node, r) {
  /** @type {DOMRect | null} */
  let best = null;
  for (const g of byId("diagram").querySelectorAll("g.active")) {
    if (g === node) continue;
    const c = g.getBoundingClientRect();
    const around = c.left <= r.left && c.right >= r.right && c.top <= r.top && c.bottom >= r.bottom;
    if (around && (best === null || c.width * c.height < best.width * best.height)) best = c;
  }
  return best;
}

/** Wheel, pinch, drag, keys and buttons pan and zoom the drawn chart. */
export function setupPanZoom() {
  const diagram = byId("diagram");
  /** @type {Map<number, { x: number; y: number }>} */
  const pointers = new Map();
  /** @type {number | null} */
  let pinch = null;
  diagram.addEventListener(
    "wheel",
    (e) => {
      if (!diagramSvg()) return;
      e.preventDefault();
      const box = diagram.getBoundingClientRect();
      const factor = Math.exp(-e.deltaY * (e.ctrlKey ? 0.01 : 0.0015));
      zoomTo(view.scale * factor, e.clientX - box.left, e.clientY - box.top);
    },
    { passive: false },
  );
  diagram.addEventListener("pointerdown", (e) => {
    if (!diagramSvg() || e.button !== 0) return;
    diagram.setPointerCapture(e.pointerId);
    pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    diagram.classList.add("dragging");
  });
  diagram.addEventListener("pointermove", (e) => {
    const last = pointers.get(e.pointerId);
    if (!last) return;
    pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    const [a, b] = pointers.values();
    if (pointers.size === 2 && a && b) {
      const box = diagram.getBoundingClientRect();
      const distance = Math.hypot(a.x - b.x, a.y - b.y);
      if (pinch)
        zoomTo((view.scale * distance) / pinch, (a.x + b.x) / 2 - box.left, (a.y + b.y) / 2 - box.top);
      pinch = distance;
    } else panBy(e.clientX - last.x, e.clientY - last.y);
  });
  /** @param {PointerEvent} e */
  function release(e) {
    pointers.delete(e.pointerId);
    pinch = null;
    if (pointers.size === 0) diagram.classList.remove("dragging");
  }
  diagram.addEventListener("pointerup", release);
  diagram.addEventListener("pointercancel", release);
  const step = 60;
  /** @type {Map<string, () => void>} */
  const keys = new Map([
    ["+", () => zoomTo(view.scale * 1.25)],
    ["=", () => zoomTo(view.scale * 1.25)],
    ["-", () => zoomTo(view.scale / 1.25)],
    ["0", actualSize],
    ["f", fit],
    ["ArrowLeft", () => panBy(step, 0)],
    ["ArrowRight", () => panBy(-step, 0)],
    ["ArrowUp", () => panBy(0, step)],
    ["ArrowDown", () => panBy(0, -step)],
  ]);
  diagram.addEventListener("keydown", (e) => {
    const action = keys.get(e.key);
    if (!action || !diagramSvg()) return;
    e.preventDefault();
    action();
  });
  byId("zoom-in").addEventListener("click", () => zoomTo(view.scale * 1.25));
  byId("zoom-out").addEventListener("click", () => zoomTo(view.scale / 1.25));
  byId("zoom-fit").addEventListener("click", fit);
  byId("zoom-actual").addEventListener("click", actualSize);
  new ResizeObserver(applyView).observe(diagram);
}
