// The inspector page, served by InspectorServer: HTML and CSS, and the script (app.js) as strings, because
// tsc copies no other files to dist. No framework and nothing from outside the server: Mermaid is served
// from node_modules as mermaid.js, the data arrives as Server-Sent Events on /events.

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
    display: grid; grid-template-rows: auto minmax(0, 1fr) 220px;
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
  main { display: grid; grid-template-columns: 470px minmax(0, 1fr); gap: 12px; padding: 12px 18px 0; min-height: 0; }
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
  #diagram { flex: 1; min-height: 0; overflow: auto; padding: 12px; display: flex; justify-content: center; align-items: flex-start; }
  #diagram svg { max-width: 100%; height: auto; }
  #diagram .empty, .empty { color: var(--faint); padding: 24px; text-align: center; }
  #diagram g.current rect, #diagram g.current path, #diagram g.current polygon {
    fill: var(--current) !important; stroke: var(--current-edge) !important; stroke-width: 2.5px !important;
  }
  #diagram g.current .nodeLabel, #diagram g.current text { fill: #5c3b00 !important; color: #5c3b00 !important; }
  #diagram g.active > rect, #diagram g.active > path {
    stroke: var(--current-edge) !important; stroke-width: 2px !important; stroke-dasharray: 5 3;
  }
  #diagram .error { color: #ba2525; font-family: var(--mono); white-space: pre-wrap; }
  .log { margin: 12px 18px 14px; }
  .log td { font-family: var(--mono); font-size: 12px; padding: 3px 10px; }
  .log td.time { color: var(--faint); }
  .log td.type { font-weight: 600; }
  .log td.data { color: var(--muted); }
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
        <colgroup><col><col style="width: 100px"><col style="width: 150px"><col style="width: 66px"></colgroup>
        <thead><tr><th>actor</th><th>machine</th><th>state</th><th>status</th></tr></thead>
        <tbody id="actors" data-testid="actors"></tbody>
      </table>
      <div class="empty" id="no-actors">No actors yet.</div>
    </div>
  </section>
  <section class="panel">
    <h2>Statechart <span class="detail" id="selection" data-testid="selection"></span>
      <button id="follow" data-testid="follow" hidden>follow latest</button></h2>
    <div id="diagram" data-testid="diagram"><div class="empty">The selected actor's statechart appears here.</div></div>
  </section>
</main>
<section class="panel log">
  <h2>Events <span class="detail" id="event-count"></span></h2>
  <div class="scroll">
    <table>
      <colgroup><col style="width: 110px"><col style="width: 200px"><col style="width: 230px"><col style="width: 200px"><col></colgroup>
      <thead><tr><th>time</th><th>to</th><th>event</th><th>from</th><th>data</th></tr></thead>
      <tbody id="events" data-testid="event-log"></tbody>
    </table>
  </div>
</section>
<script src="mermaid.js"></script>
<script src="app.js"></script>
</body>
</html>
`;

export const PAGE_SCRIPT = String.raw`"use strict";
(function () {
  var MAX_EVENTS = 200;
  var model = { actors: new Map(), machines: new Map(), events: [] };
  var ui = { selected: null, pinned: false, showAll: false, drawn: null, drawing: null, token: 0, scheduled: false, eventsDirty: true };
  var byId = function (id) { return document.getElementById(id); };

  window.mermaid.initialize({
    startOnLoad: false,
    securityLevel: "strict",
    theme: "base",
    fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
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

  function showMessage(cls, text) {
    var diagram = byId("diagram");
    diagram.replaceChildren(el("div", { class: cls, text: text }));
    ["actorId", "sessionId", "machine", "currentState", "currentIds"].forEach(function (k) { delete diagram.dataset[k]; });
    ui.drawn = null;
  }

  /** Draws a machine's chart once; the states are then marked on the drawn SVG. */
  function draw(chart) {
    if (ui.drawing === chart.machineId) return;
    ui.drawing = chart.machineId;
    var token = ++ui.token;
    var renderId = "chart-" + token;
    window.mermaid.render(renderId, chart.mermaid).then(function (result) {
      if (token !== ui.token) return;
      var diagram = byId("diagram");
      diagram.innerHTML = result.svg;
      var known = new Set(Object.keys(chart.stateIds).map(function (k) { return chart.stateIds[k]; }));
      var prefix = renderId + "-state-";
      diagram.querySelectorAll("g[id]").forEach(function (g) {
        if (g.id.indexOf(prefix) !== 0) return;
        var match = /^(.+)-\d+$/.exec(g.id.slice(prefix.length));
        if (match && known.has(match[1])) g.setAttribute("data-state-id", match[1]);
      });
      diagram.dataset.machine = chart.machineId;
      ui.drawn = chart.machineId;
      ui.drawing = null;
      render();
    }, function (error) {
      if (token !== ui.token) return;
      ui.drawing = null;
      showMessage("error", "Mermaid could not draw " + chart.machineId + ": " + (error && error.message ? error.message : error));
      ui.drawn = "error:" + chart.machineId;
    });
  }

  function highlight(actor) {
    var diagram = byId("diagram");
    var ids = actor.current.join(" ");
    var moved = diagram.dataset.currentIds !== ids || diagram.dataset.sessionId !== actor.sessionId;
    var first = null;
    diagram.querySelectorAll("[data-state-id]").forEach(function (g) {
      var id = g.getAttribute("data-state-id");
      var current = actor.current.indexOf(id) >= 0;
      g.classList.toggle("current", current);
      g.classList.toggle("active", actor.active.indexOf(id) >= 0);
      if (current && first === null) first = g;
    });
    diagram.dataset.actorId = actor.id;
    diagram.dataset.sessionId = actor.sessionId;
    diagram.dataset.currentState = actor.state;
    diagram.dataset.currentIds = ids;
    if (moved && first !== null) first.scrollIntoView({ block: "nearest", inline: "nearest" });
  }

  function renderDiagram(actor) {
    if (!actor) return showMessage("empty", "No state machine actors yet.");
    var chart = model.machines.get(actor.machineId);
    if (!chart) return showMessage("empty", "No chart for machine " + actor.machineId + ".");
    if (chart.mermaid === null) return showMessage("error", "No chart for " + chart.machineId + ": " + chart.error);
    if (ui.drawn === "error:" + chart.machineId) return;
    if (ui.drawn !== chart.machineId) return draw(chart);
    highlight(actor);
  }

  function pad(n, width) { return String(n).padStart(width, "0"); }
  function time(at) {
    var d = new Date(at);
    return pad(d.getHours(), 2) + ":" + pad(d.getMinutes(), 2) + ":" + pad(d.getSeconds(), 2) + "." + pad(d.getMilliseconds(), 3);
  }

  function renderEvents() {
    if (!ui.eventsDirty) return;
    ui.eventsDirty = false;
    var rows = model.events.slice().reverse().map(function (e) {
      return el("tr", { "data-testid": "event", "data-type": e.type, "data-target": e.targetId }, [
        el("td", { class: "time", text: time(e.at) }),
        el("td", { text: e.targetId, title: e.targetId }),
        el("td", { class: "type", text: e.type, title: e.type }),
        el("td", { text: e.sourceId || "", title: e.sourceId || "" }),
        el("td", { class: "data", text: e.data || "", title: e.data || "" }),
      ]);
    });
    byId("events").replaceChildren.apply(byId("events"), rows);
    byId("event-count").textContent = model.events.length + (model.events.length === MAX_EVENTS ? " (latest)" : "");
  }

  function render() {
    var actor = selectedActor();
    renderActors(actor);
    renderSelection(actor);
    renderDiagram(actor);
    renderEvents();
  }

  function setConnection(state) {
    var pill = byId("connection");
    pill.dataset.state = state;
    pill.textContent = state === "open" ? "live" : state;
  }

  byId("show-all").addEventListener("change", function (e) { ui.showAll = e.target.checked; render(); });
  byId("follow").addEventListener("click", function () { ui.pinned = false; render(); });

  var source = new EventSource("events");
  source.onopen = function () { setConnection("open"); };
  source.onerror = function () { setConnection(source.readyState === EventSource.CLOSED ? "closed" : "connecting"); };
  source.onmessage = function (e) { apply(JSON.parse(e.data)); schedule(); };
  render();
})();
`;
