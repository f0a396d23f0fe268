// The inspector page, served by InspectorServer: HTML and CSS, and the script (app.js) as strings, because
// tsc copies no other files to dist. No framework and nothing from outside the server: Mermaid is served
// from node_modules as mermaid.js, the data arrives as Server-Sent Events on /events. The script is built
// from its parts: the statechart view (pageChart.ts), the sequence view (pageSequence.ts) and the rest here.
import { CHART_SCRIPT } from "./pageChart.js";
import { SEQUENCE_SCRIPT } from "./pageSequence.js";

export const PAGE_HTML = String.raw`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>a2a-statecharts inspector</title>
<style>
  :root {
    --ink: #1f2933; --muted: #616e7c; --faint: #9aa5b1; --line: #e4e7eb; --panel: #ffffff;
    --bg: #f3f5f8; --accent: #0b6bcb; --current: #fde68a; --current-edge: #d97706;
    --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace;
  }
  * { box-sizing: border-box; }
  html, body { height: 100%; }
  body {
    margin: 0; color: var(--ink); background: var(--bg);
    font: 13px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK KR", sans-serif;
    display: grid; grid-template-rows: auto minmax(0, 1fr) 280px;
  }
  header {
    display: flex; align-items: center; gap: 14px; padding: 10px 18px;
    background: #1f2933; color: #f5f7fa;
  }
  header h1 { font-size: 15px; font-weight: 600; margin: 0; letter-spacing: 0.01em; }
  header .counts { color: #cbd2d9; }
  header label { margin-left: auto; color: #cbd2d9; display: flex; align-items: center; gap: 6px; cursor: pointer; }
  .pill { font-size: 11px; padding: 2px 8px; border-radius: 999px; background: #52606d; color: #fff; }
  .pill[data-state="open"] { background: #2f8132; }
  .pill[data-state="closed"] { background: #ba2525; }
  main { display: grid; grid-template-columns: 400px minmax(0, 1fr); gap: 12px; padding: 12px 18px 0; min-height: 0; }
  .panel {
    background: var(--panel); border: 1px solid #d9e2ec; border-radius: 8px;
    display: flex; flex-direction: column; min-height: 0; overflow: hidden;
  }
  .panel > h2 {
    display: flex; align-items: center; gap: 8px; margin: 0; padding: 8px 12px; min-height: 37px;
    border-bottom: 1px solid var(--line); font-size: 12px; font-weight: 600; color: var(--muted);
    text-transform: uppercase; letter-spacing: 0.05em;
  }
  .panel > h2 .detail {
    text-transform: none; letter-spacing: 0; font-weight: 400; color: var(--ink);
    min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap;
  }
  .scroll { overflow: auto; flex: 1; min-height: 0; }
  table { width: 100%; border-collapse: collapse; table-layout: fixed; }
  th { position: sticky; top: 0; background: #f8fafc; font-weight: 600; color: var(--muted); font-size: 11px; }
  th, td {
    padding: 5px 10px; text-align: left; border-bottom: 1px solid #f0f2f5;
    white-space: nowrap; overflow: hidden; text-overflow: ellipsis;
  }
  td.id { font-family: var(--mono); font-size: 12px; }
  tr[data-testid="actor"] { cursor: pointer; }
  tr[data-testid="actor"]:hover { background: #f5f9ff; }
  tr[data-testid="actor"].selected { background: #e3f0ff; box-shadow: inset 3px 0 0 var(--accent); }
  tr.finished td { color: var(--faint); }
  .state { font-family: var(--mono); font-size: 12px; padding: 1px 6px; border-radius: 4px; background: #fef3c7; color: #7c4a03; }
  tr.finished .state { background: #eef1f4; color: var(--muted); }
  .status { font-size: 11px; }
  .status-error { color: #ba2525; font-weight: 600; }
  .child { color: var(--faint); margin-right: 4px; }
  button {
    margin-left: auto; flex: none; white-space: nowrap; font: inherit; font-size: 11px; text-transform: none; letter-spacing: 0;
    border: 1px solid #cbd2d9; background: #fff; border-radius: 4px; padding: 2px 8px; cursor: pointer;
  }
  button[hidden] { display: none; }
  .chart { position: relative; flex: 1; min-height: 0; display: flex; }
  #diagram { flex: 1; min-height: 0; overflow: hidden; cursor: grab; touch-action: none; outline: none; }
  #diagram:focus-visible { box-shadow: inset 0 0 0 2px var(--accent); }
  #diagram.dragging { cursor: grabbing; }
  #diagram svg { display: block; width: 100%; height: 100%; user-select: none; }
  .zoom-tools { position: absolute; right: 10px; bottom: 10px; display: flex; gap: 4px; align-items: center;
    background: rgba(255,255,255,0.92); border: 1px solid #d9e2ec; border-radius: 6px; padding: 4px; }
  .zoom-tools[hidden] { display: none; }
  .zoom-tools button { margin: 0; font-size: 12px; min-width: 28px; }
  .zoom-tools span { font-size: 11px; color: var(--muted); min-width: 40px; text-align: center; }
  .empty { color: var(--faint); padding: 24px; text-align: center; }
  #diagram g.current rect, #diagram g.current path, #diagram g.current polygon {
    fill: var(--current) !important; stroke: var(--current-edge) !important; stroke-width: 2.5px !important;
  }
  #diagram g.current .nodeLabel, #diagram g.current text { fill: #5c3b00 !important; color: #5c3b00 !important; }
  #diagram g.active > rect, #diagram g.active > path {
    stroke: var(--current-edge) !important; stroke-width: 2px !important; stroke-dasharray: 5 3;
  }
  #diagram .error { color: #ba2525; font-family: var(--mono); white-space: pre-wrap; }
  .log { margin: 12px 18px 14px; }
  .log h2 .scope { color: var(--muted); }
  .log h2 label.all { margin-left: auto; text-transform: none; letter-spacing: 0; font-weight: 400; color: var(--ink);
    display: flex; align-items: center; gap: 6px; cursor: pointer; }
  .log .body { display: grid; grid-template-columns: minmax(0, 1fr) 300px; flex: 1; min-height: 0; }
  #sequence-scroll { overflow: auto; min-height: 0; position: relative; }
  .lane-heads { position: sticky; top: 0; height: 40px; background: #f8fafc; border-bottom: 1px solid var(--line); z-index: 1; }
  .lane-head { position: absolute; top: 4px; height: 32px; display: flex; flex-direction: column; align-items: center;
    justify-content: center; border: 1px solid #cbd2d9; border-radius: 5px; background: #fff; line-height: 1.2; overflow: hidden; }
  .lane-id { font-family: var(--mono); font-size: 12px; white-space: nowrap; }
  .lane-machine { font-size: 11px; color: var(--muted); white-space: nowrap; }
  svg.sequence { display: block; font: 12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
  svg.sequence .lifeline { stroke: #cbd2d9; stroke-dasharray: 4 4; }
  svg.sequence .arrow { stroke: #52606d; stroke-width: 1.4; fill: none; }
  svg.sequence .head { fill: #52606d; }
  svg.sequence .hit { fill: transparent; }
  svg.sequence .message { cursor: pointer; outline: none; }
  svg.sequence .message:hover .hit, svg.sequence .message:focus-visible .hit { fill: #f5f9ff; }
  svg.sequence .message.selected .hit { fill: #e3f0ff; }
  svg.sequence .message.selected .arrow { stroke: var(--accent); }
  svg.sequence .time { fill: var(--faint); font-family: var(--mono); font-size: 11px; }
  svg.sequence .label { fill: var(--ink); font-weight: 600; }
  #event-detail { border-left: 1px solid var(--line); padding: 10px 12px; overflow: auto; min-height: 0; }
  #event-detail .detail-type { font-family: var(--mono); font-weight: 600; overflow-wrap: anywhere; }
  #event-detail .detail-meta { color: var(--muted); margin: 2px 0 8px; overflow-wrap: anywhere; }
  #event-detail pre { margin: 0; font-family: var(--mono); font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; }
</style>
</head>
<body>
<header>
  <h1>a2a-statecharts inspector</h1>
  <span class="pill" data-testid="connection" data-state="connecting" id="connection">connecting</span>
  <span class="counts" data-testid="counts" id="counts"></span>
  <label><input type="checkbox" id="show-all" data-testid="show-all"> show promise and callback actors</label>
</header>
<main>
  <section class="panel">
    <h2>Actors</h2>
    <div class="scroll">
      <table>
        <colgroup><col><col style="width: 92px"><col style="width: 140px"><col style="width: 60px"></colgroup>
        <thead><tr><th>actor</th><th>machine</th><th>state</th><th>status</th></tr></thead>
        <tbody id="actors" data-testid="actors"></tbody>
      </table>
      <div class="empty" id="no-actors">No actors yet.</div>
    </div>
  </section>
  <section class="panel">
    <h2>Statechart <span class="detail" id="selection" data-testid="selection"></span>
      <button id="follow" data-testid="follow" hidden>follow latest</button></h2>
    <div class="chart">
      <div id="diagram" data-testid="diagram" tabindex="0" aria-label="statechart: drag to pan, wheel to zoom, + and - zoom, 0 shows 100%, f fits"><div class="empty">The selected actor's statechart appears here.</div></div>
      <div class="zoom-tools" id="zoom-tools" hidden>
        <button id="zoom-out" data-testid="zoom-out" title="zoom out (-)" aria-label="zoom out">−</button>
        <span id="zoom-level" data-testid="zoom-level">100%</span>
        <button id="zoom-in" data-testid="zoom-in" title="zoom in (+)" aria-label="zoom in">+</button>
        <button id="zoom-actual" data-testid="zoom-actual" title="actual size (0)">1:1</button>
        <button id="zoom-fit" data-testid="zoom-fit" title="fit the chart (f)">fit</button>
      </div>
    </div>
  </section>
</main>
<section class="panel log">
  <h2>Events <span class="detail"><span id="event-count"></span> <span class="scope" id="event-scope" data-testid="event-scope"></span></span>
    <label class="all"><input type="checkbox" id="all-events" data-testid="all-events"> all actors</label></h2>
  <div class="body">
    <div id="sequence-scroll" data-testid="event-log">
      <div id="sequence"></div>
      <div class="empty" id="no-events">No events yet.</div>
    </div>
    <div id="event-detail" data-testid="event-detail"></div>
  </div>
</section>
<script src="mermaid.js"></script>
<script src="app.js"></script>
</body>
</html>
`;

const APP_CORE = String.raw`
  var MAX_EVENTS = 200;
  var model = { actors: new Map(), machines: new Map(), events: [] };
  var ui = { selected: null, pinned: false, showAll: false, drawn: null, drawing: null, token: 0, scheduled: false, eventsDirty: true, event: null, allEvents: false, sequenceScope: null };
  var byId = function (id) { return document.getElementById(id); };

  window.mermaid.initialize({
    startOnLoad: false,
    securityLevel: "strict",
    theme: "base",
    fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
    // Room between states for the edge labels (pageChart.ts moves apart any that still touch).
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

  function apply(m) {
    if (m.kind === "hello") {
      model.actors = new Map(m.actors.map(function (a) { return [a.sessionId, a]; }));
      model.machines = new Map(m.machines.map(function (c) { return [c.machineId, c]; }));
      model.events = m.events.slice(-MAX_EVENTS);
      ui.drawn = null;
      ui.eventsDirty = true;
    } else if (m.kind === "machine") {
      model.machines.set(m.machine.machineId, m.machine);
    } else if (m.kind === "actor") {
      model.actors.set(m.actor.sessionId, m.actor);
    } else if (m.kind === "drop") {
      m.sessionIds.forEach(function (id) { model.actors.delete(id); });
    } else if (m.kind === "event") {
      model.events.push(m.event);
      if (model.events.length > MAX_EVENTS) model.events.splice(0, model.events.length - MAX_EVENTS);
      ui.eventsDirty = true;
    }
  }

  function schedule() {
    if (ui.scheduled) return;
    ui.scheduled = true;
    setTimeout(function () { ui.scheduled = false; render(); }, 16);
  }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "class") node.className = attrs[k];
      else if (attrs[k] !== undefined && attrs[k] !== null) node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { node.appendChild(c); });
    return node;
  }

  function visible(a) { return ui.showAll || a.machineId !== undefined; }

  /** Visible actors as a tree: newest root first, each followed by its children in creation order. */
  function ordered() {
    var all = Array.from(model.actors.values()).filter(visible);
    var present = new Set(all.map(function (a) { return a.sessionId; }));
    var kids = new Map();
    var roots = [];
    all.forEach(function (a) {
      if (a.parentSessionId && present.has(a.parentSessionId)) {
        if (!kids.has(a.parentSessionId)) kids.set(a.parentSessionId, []);
        kids.get(a.parentSessionId).push(a);
      } else roots.push(a);
    });
    roots.sort(function (x, y) { return y.seq - x.seq; });
    var out = [];
    function walk(a, depth) {
      out.push({ actor: a, depth: depth });
      (kids.get(a.sessionId) || []).sort(function (x, y) { return x.seq - y.seq; }).forEach(function (k) { walk(k, depth + 1); });
    }
    roots.forEach(function (r) { walk(r, 0); });
    return out;
  }

  /** The pinned actor while it exists, else the most recently updated machine actor. */
  function selectedActor() {
    var pinned = ui.pinned ? model.actors.get(ui.selected) : undefined;
    if (pinned) return pinned;
    ui.pinned = false;
    var best = null;
    model.actors.forEach(function (a) {
      if (a.machineId !== undefined && (best === null || a.updatedSeq > best.updatedSeq)) best = a;
    });
    // An actor drawn inside its parent's chart is followed there.
    var parent = best && best.parentSessionId ? model.actors.get(best.parentSessionId) : undefined;
    var chart = parent ? model.machines.get(parent.machineId) : undefined;
    if (chart && (chart.nested || []).some(function (n) { return n.machineId === best.machineId; })) best = parent;
    ui.selected = best ? best.sessionId : null;
    return best;
  }

  function renderActors(selected) {
    var rows = ordered().map(function (entry) {
      var a = entry.actor;
      var idCell = el("td", { class: "id", title: a.id + (a.systemId ? " (" + a.systemId + ")" : "") });
      if (entry.depth > 0) idCell.appendChild(el("span", { class: "child", text: new Array(entry.depth).join("  ") + "└" }));
      idCell.appendChild(document.createTextNode(a.id));
      var row = el("tr", {
        "data-testid": "actor",
        "data-actor-id": a.id,
        "data-session-id": a.sessionId,
        "data-machine": a.machineId || "",
        "data-state": a.state,
        "data-status": a.status,
        class: (a.status === "active" ? "" : "finished") + (selected && selected.sessionId === a.sessionId ? " selected" : ""),
      }, [
        idCell,
        el("td", { text: a.machineId || "—" }),
        el("td", {}, a.state ? [el("span", { class: "state", text: a.state })] : []),
        el("td", { class: "status status-" + a.status, text: a.status, title: a.error || "" }),
      ]);
      row.addEventListener("click", function () {
        ui.selected = a.sessionId;
        ui.pinned = true;
        render();
      });
      return row;
    });
    byId("actors").replaceChildren.apply(byId("actors"), rows);
    byId("no-actors").hidden = rows.length > 0;
    var live = 0;
    model.actors.forEach(function (a) { if (a.status === "active") live += 1; });
    byId("counts").textContent = model.actors.size + " actors · " + live + " active";
  }

  function renderSelection(actor) {
    var selection = byId("selection");
    selection.replaceChildren();
    if (actor) {
      selection.appendChild(document.createTextNode(actor.id + " · " + actor.machineId + " · "));
      selection.appendChild(el("span", { class: "state", text: actor.state || "?" }));
      selection.appendChild(document.createTextNode(" " + actor.status));
    }
    byId("follow").hidden = !ui.pinned;
  }

  function render() {
    var actor = selectedActor();
    renderActors(actor);
    renderSelection(actor);
    renderDiagram(actor);
    renderSequence(actor);
  }
`;

const APP_START = String.raw`
  function setConnection(state) {
    var pill = byId("connection");
    pill.dataset.state = state;
    pill.textContent = state === "open" ? "live" : state;
  }

  byId("show-all").addEventListener("change", function (e) { ui.showAll = e.target.checked; render(); });
  byId("follow").addEventListener("click", function () { ui.pinned = false; render(); });
  byId("all-events").addEventListener("change", function (e) { ui.allEvents = e.target.checked; render(); });

  var source = new EventSource("events");
  source.onopen = function () { setConnection("open"); };
  source.onerror = function () { setConnection(source.readyState === EventSource.CLOSED ? "closed" : "connecting"); };
  source.onmessage = function (e) { apply(JSON.parse(e.data)); schedule(); };
  setupPanZoom();
  render();
`;

/** The page's script (app.js): one closure, its parts sharing the model and the helpers. */
export const PAGE_SCRIPT = `"use strict";\n(function () {${APP_CORE}${CHART_SCRIPT}${SEQUENCE_SCRIPT}${APP_START}})();\n`;
