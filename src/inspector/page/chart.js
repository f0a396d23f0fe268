// @ts-check
// The inspector page's statechart view: Mermaid draws the selected actor's machine at its natural size
// (labels as large as the page's text), the current states are marked, a state's invoked machine is drawn
// inside it with its actor's states marked too; the view pans and zooms (panZoom.js).
/** @import { ActorView, MachineChart, NestedChart } from "../protocol.js" */
/** @import { Mermaid } from "mermaid" */
import { byId, el } from "./dom.js";
import { model, ui } from "./model.js";
import { applyView, diagramSvg, reveal, setupPanZoom, view } from "./panZoom.js";

/** Mermaid's browser bundle, mermaid.js, is loaded before this module and defines `window.mermaid`. */
const mermaid = /** @type {{ mermaid: Mermaid }} */ (/** @type {unknown} */ (window)).mermaid;

/**
 * Mermaid can lay two edge labels on top of each other (edges that cross near their middles): each
 * overlap moves the lower label down until it clears the other, a few passes at most.
 * @param {SVGSVGElement} svg
 */
function separateLabels(svg) {
  const labels = Array.from(svg.querySelectorAll("g.edgeLabel"))
    .filter((g) => g instanceof SVGGElement)
    .filter((g) => (g.textContent ?? "").trim() !== "");
  const others = Array.from(svg.querySelectorAll(".nodeLabel")).map((n) => n.getBoundingClientRect());
  /** @param {DOMRect} a @param {DOMRect} b */
  function overlap(a, b) {
    return (
      Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 &&
      Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1
    );
  }
  /** @param {SVGGElement} g @param {number} dy */
  function shift(g, dy) {
    const t = g.transform.baseVal.consolidate();
    const x = t ? t.matrix.e : 0;
    const y = t ? t.matrix.f : 0;
    g.setAttribute("transform", "translate(" + x + ", " + (y + dy / view.scale) + ")");
  }
  for (let pass = 0; pass < 8; pass++) {
    let moved = false;
    const boxes = labels.map((g) => g.getBoundingClientRect());
    for (let i = 0; i < labels.length; i++) {
      const gi = labels[i];
      let bi = boxes[i];
      if (!gi || !bi) continue;
      for (let j = 0; j < labels.length; j++) {
        const gj = labels[j];
        const bj = boxes[j];
        if (!gj || !bj || i === j || bj.top < bi.top || (bj.top === bi.top && j < i)) continue;
        if (!overlap(bi, bj)) continue;
        shift(gj, bi.bottom - bj.top + 2);
        boxes[j] = gj.getBoundingClientRect();
        moved = true;
      }
      for (const node of others) {
        if (!overlap(node, bi)) continue;
        shift(gi, node.bottom - bi.top + 2);
        bi = boxes[i] = gi.getBoundingClientRect();
        moved = true;
      }
    }
    if (!moved) return;
  }
}

/** @param {"empty" | "error"} cls @param {string} text */
function showMessage(cls, text) {
  const diagram = byId("diagram");
  diagram.replaceChildren(el("div", { class: cls, text }));
  for (const name of ["actor-id", "session-id", "machine", "current-state", "current-ids", "zoom"]) {
    diagram.removeAttribute("data-" + name);
  }
  byId("zoom-tools").hidden = true;
  ui.drawn = null;
}

/**
 * Draws a machine's chart once, then renders again to mark the states on the drawn SVG.
 * @param {MachineChart} chart
 * @param {string} source its Mermaid source
 * @param {() => void} render
 */
function draw(chart, source, render) {
  if (ui.drawing === chart.machineId) return;
  ui.drawing = chart.machineId;
  const token = ++ui.token;
  const renderId = "chart-" + token;
  mermaid.render(renderId, source).then(
    (result) => {
      if (token !== ui.token) return;
      const diagram = byId("diagram");
      diagram.innerHTML = result.svg;
      const svg = diagramSvg();
      if (!svg) throw new Error("Mermaid drew no SVG");
      const natural = svg.viewBox.baseVal;
      view.width = natural.width;
      view.height = natural.height;
      svg.removeAttribute("style");
      svg.setAttribute("width", "100%");
      svg.setAttribute("height", "100%");
      svg.setAttribute("preserveAspectRatio", "xMinYMin meet");
      const known = new Set(Object.values(chart.stateIds));
      for (const n of chart.nested ?? []) for (const id of Object.values(n.stateIds)) known.add(id);
      const prefix = renderId + "-state-";
      for (const g of diagram.querySelectorAll("g[id]")) {
        if (!g.id.startsWith(prefix)) continue;
        const match = /^(.+)-\d+$/.exec(g.id.slice(prefix.length));
        if (match?.[1] !== undefined && known.has(match[1])) g.setAttribute("data-state-id", match[1]);
      }
      diagram.dataset.machine = chart.machineId;
      byId("zoom-tools").hidden = false;
      view.x = 0;
      view.y = 0;
      view.scale = 1;
      view.centered = null;
      applyView();
      separateLabels(svg);
      ui.drawn = chart.machineId;
      ui.drawing = null;
      render();
    },
    (error) => {
      if (token !== ui.token) return;
      ui.drawing = null;
      const message = error instanceof Error ? error.message : String(error);
      showMessage("error", "Mermaid could not draw " + chart.machineId + ": " + message);
      ui.drawn = "error:" + chart.machineId;
    },
  );
}

/**
 * The latest actor of a nested machine under parent, if it still runs.
 * @param {ActorView} parent
 * @param {NestedChart} nested
 * @returns {ActorView | null}
 */
function nestedActor(parent, nested) {
  /** @type {ActorView | null} */
  let best = null;
  for (const a of model.actors.values()) {
    if (
      a.parentSessionId === parent.sessionId &&
      a.machineId === nested.machineId &&
      a.status === "active" &&
      (best === null || a.updatedSeq > best.updatedSeq)
    ) {
      best = a;
    }
  }
  return best;
}

/** @param {ActorView} actor @param {MachineChart} chart */
function highlight(actor, chart) {
  const diagram = byId("diagram");
  const current = actor.current.slice();
  const active = actor.active.slice();
  for (const n of chart.nested ?? []) {
    const child = current.includes(n.stateId) ? nestedActor(actor, n) : null;
    if (!child) continue;
    current.splice(current.indexOf(n.stateId), 1);
    active.push(n.stateId);
    for (const id of child.current) current.push(n.prefix + id);
    for (const id of child.active) active.push(n.prefix + id);
  }
  const ids = current.join(" ");
  const moved = diagram.dataset.currentIds !== ids || diagram.dataset.sessionId !== actor.sessionId;
  /** @type {Element | null} */
  let first = null;
  for (const g of diagram.querySelectorAll("[data-state-id]")) {
    const id = g.getAttribute("data-state-id") ?? "";
    const isCurrent = current.includes(id);
    g.classList.toggle("current", isCurrent);
    g.classList.toggle("active", active.includes(id));
    if (isCurrent && first === null) first = g;
  }
  diagram.dataset.actorId = actor.id;
  diagram.dataset.sessionId = actor.sessionId;
  diagram.dataset.currentState = actor.state;
  diagram.dataset.currentIds = ids;
  if (moved && first !== null) reveal(first, view.centered !== actor.sessionId);
  if (first !== null) view.centered = actor.sessionId;
}

/** Sets Mermaid up and the view's panning and zooming. */
export function setupChart() {
  mermaid.initialize({
    startOnLoad: false,
    securityLevel: "strict",
    theme: "base",
    fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
    // Room between states for the edge labels (separateLabels moves apart any that still touch).
    state: { nodeSpacing: 50, rankSpacing: 60, useMaxWidth: false },
    themeVariables: {
      fontSize: "13px",
      primaryColor: "#f0f4f8",
      primaryBorderColor: "#9fb3c8",
      primaryTextColor: "#1f2933",
      lineColor: "#829ab1",
      secondaryColor: "#f8fafc",
      tertiaryColor: "#ffffff",
    },
  });
  setupPanZoom();
}

/**
 * Shows the actor's chart with its states marked, drawing the chart first when it is not drawn yet.
 * @param {ActorView | null} actor
 * @param {() => void} render renders the page again, once a chart is drawn
 */
export function renderDiagram(actor, render) {
  if (!actor) return showMessage("empty", "No state machine actors yet.");
  const chart = actor.machineId === undefined ? undefined : model.machines.get(actor.machineId);
  if (!chart) return showMessage("empty", "No chart for machine " + actor.machineId + ".");
  if (chart.mermaid === null)
    return showMessage("error", "No chart for " + chart.machineId + ": " + chart.error);
  if (ui.drawn === "error:" + chart.machineId) return;
  if (ui.drawn !== chart.machineId) return draw(chart, chart.mermaid, render);
  highlight(actor, chart);
}
