// The inspector page's statechart view (part of app.js, see page.ts): Mermaid draws the selected actor's
// machine at its natural size (labels as large as the page's text), the current states are marked, a state's
// invoked machine is drawn inside it with its actor's states marked too, and the view pans and zooms by
// rewriting the SVG's viewBox: wheel or pinch zooms around the pointer, dragging pans, the buttons and keys
// (+, -, 0 for 100%, f to fit, arrows to pan) do the rest.

export const CHART_SCRIPT = String.raw`
  var MIN_ZOOM = 0.1, MAX_ZOOM = 4;
  var view = { x: 0, y: 0, scale: 1, width: 0, height: 0, centered: null };

  function diagramSvg() { return byId("diagram").querySelector("svg"); }

  function applyView() {
    var svg = diagramSvg();
    var box = byId("diagram").getBoundingClientRect();
    if (!svg || box.width === 0) return;
    var w = box.width / view.scale, h = box.height / view.scale;
    svg.setAttribute("viewBox", view.x + " " + view.y + " " + w + " " + h);
    byId("diagram").dataset.zoom = String(Math.round(view.scale * 1000) / 1000);
    byId("zoom-level").textContent = Math.round(view.scale * 100) + "%";
  }

  /** Zooms to scale, keeping the chart point under (px, py) (pixels from the view's corner) where it is. */
  function zoomTo(scale, px, py) {
    var box = byId("diagram").getBoundingClientRect();
    if (px === undefined) { px = box.width / 2; py = box.height / 2; }
    var next = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, scale));
    var cx = view.x + px / view.scale, cy = view.y + py / view.scale;
    view.scale = next;
    view.x = cx - px / next;
    view.y = cy - py / next;
    applyView();
  }

  function panBy(dx, dy) { view.x -= dx / view.scale; view.y -= dy / view.scale; applyView(); }

  /** The whole chart in view, at most at 100%. */
  function fit() {
    var box = byId("diagram").getBoundingClientRect();
    if (!view.width || box.width === 0) return;
    var pad = 16;
    view.scale = Math.max(MIN_ZOOM, Math.min(1, (box.width - 2 * pad) / view.width, (box.height - 2 * pad) / view.height));
    view.x = (view.width - box.width / view.scale) / 2;
    view.y = (view.height - box.height / view.scale) / 2;
    applyView();
  }

  /** 100%, centred on the chart point (x, y), or on the current state, or the chart's top. */
  function actualSize(x, y) {
    var box = byId("diagram").getBoundingClientRect();
    view.scale = 1;
    if (x === undefined) {
      var current = byId("diagram").querySelector("g.current");
      if (current) return reveal(current, true);
      x = view.width / 2; y = box.height / 2;
    }
    view.x = x - box.width / 2;
    view.y = y - box.height / 2;
    applyView();
  }

  /**
   * Brings a drawn node into view when it is outside (or always with force): centred, but with the box
   * of its innermost active state shown from its top (title included) and its left edge, each when the
   * node still fits in view that way.
   */
  function reveal(node, force) {
    var svg = diagramSvg();
    if (!svg) return;
    var box = byId("diagram").getBoundingClientRect();
    var r = node.getBoundingClientRect();
    var inside = r.left >= box.left && r.right <= box.right && r.top >= box.top && r.bottom <= box.bottom;
    if (inside && !force) return;
    var margin = 24;
    var dx = r.left + r.width / 2 - (box.left + box.width / 2);
    var dy = r.top + r.height / 2 - (box.top + box.height / 2);
    // A box larger than the view (a state holding others) is shown from its top-left corner.
    if (r.width > box.width - 2 * margin) dx = r.left - box.left - margin;
    if (r.height > box.height - 2 * margin) dy = r.top - box.top - margin;
    var parent = enclosingActive(node, r);
    if (parent) {
      var cdx = parent.left - box.left - margin, cdy = parent.top - box.top - margin;
      if (r.right - cdx <= box.right - margin) dx = cdx;
      if (r.bottom - cdy <= box.bottom - margin) dy = cdy;
    }
    view.x += dx / view.scale;
    view.y += dy / view.scale;
    applyView();
  }

  /** The smallest active state box drawn around a node's rectangle r, as a screen rectangle. */
  function enclosingActive(node, r) {
    var best = null;
    byId("diagram").querySelectorAll("g.active").forEach(function (g) {
      if (g === node) return;
      var c = g.getBoundingClientRect();
      var around = c.left <= r.left && c.right >= r.right && c.top <= r.top && c.bottom >= r.bottom;
      if (around && (best === null || c.width * c.height < best.width * best.height)) best = c;
    });
    return best;
  }

  function setupPanZoom() {
    var diagram = byId("diagram");
    var pointers = new Map();
    var pinch = null;
    diagram.addEventListener("wheel", function (e) {
      if (!diagramSvg()) return;
      e.preventDefault();
      var box = diagram.getBoundingClientRect();
      var factor = Math.exp(-e.deltaY * (e.ctrlKey ? 0.01 : 0.0015));
      zoomTo(view.scale * factor, e.clientX - box.left, e.clientY - box.top);
    }, { passive: false });
    diagram.addEventListener("pointerdown", function (e) {
      if (!diagramSvg() || e.button !== 0) return;
      diagram.setPointerCapture(e.pointerId);
      pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
      diagram.classList.add("dragging");
    });
    diagram.addEventListener("pointermove", function (e) {
      var last = pointers.get(e.pointerId);
      if (!last) return;
      pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
      if (pointers.size === 2) {
        var p = Array.from(pointers.values());
        var box = diagram.getBoundingClientRect();
        var distance = Math.hypot(p[0].x - p[1].x, p[0].y - p[1].y);
        if (pinch) zoomTo(view.scale * distance / pinch, (p[0].x + p[1].x) / 2 - box.left, (p[0].y + p[1].y) / 2 - box.top);
        pinch = distance;
      } else panBy(e.clientX - last.x, e.clientY - last.y);
    });
    function release(e) {
      pointers.delete(e.pointerId);
      pinch = null;
      if (pointers.size === 0) diagram.classList.remove("dragging");
    }
    diagram.addEventListener("pointerup", release);
    diagram.addEventListener("pointercancel", release);
    diagram.addEventListener("keydown", function (e) {
      var step = 60;
      var keys = {
        "+": function () { zoomTo(view.scale * 1.25); }, "=": function () { zoomTo(view.scale * 1.25); },
        "-": function () { zoomTo(view.scale / 1.25); }, "0": function () { actualSize(); }, f: fit,
        ArrowLeft: function () { panBy(step, 0); }, ArrowRight: function () { panBy(-step, 0); },
        ArrowUp: function () { panBy(0, step); }, ArrowDown: function () { panBy(0, -step); },
      };
      if (!keys[e.key] || !diagramSvg()) return;
      e.preventDefault();
      keys[e.key]();
    });
    byId("zoom-in").addEventListener("click", function () { zoomTo(view.scale * 1.25); });
    byId("zoom-out").addEventListener("click", function () { zoomTo(view.scale / 1.25); });
    byId("zoom-fit").addEventListener("click", fit);
    byId("zoom-actual").addEventListener("click", function () { actualSize(); });
    new ResizeObserver(applyView).observe(diagram);
  }

  /**
   * Mermaid can lay two edge labels on top of each other (edges that cross near their middles): each
   * overlap moves the lower label down until it clears the other, a few passes at most.
   */
  function separateLabels(svg) {
    var labels = Array.from(svg.querySelectorAll("g.edgeLabel")).filter(function (g) { return g.textContent.trim() !== ""; });
    var others = Array.from(svg.querySelectorAll(".nodeLabel")).map(function (n) { return n.getBoundingClientRect(); });
    function overlap(a, b) {
      return Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
    }
    function shift(g, dy) {
      var t = g.transform.baseVal.consolidate();
      var x = t ? t.matrix.e : 0, y = t ? t.matrix.f : 0;
      g.setAttribute("transform", "translate(" + x + ", " + (y + dy / view.scale) + ")");
    }
    for (var pass = 0; pass < 8; pass++) {
      var moved = false;
      var boxes = labels.map(function (g) { return g.getBoundingClientRect(); });
      for (var i = 0; i < labels.length; i++) {
        for (var j = 0; j < labels.length; j++) {
          if (i === j || boxes[j].top < boxes[i].top || (boxes[j].top === boxes[i].top && j < i)) continue;
          if (!overlap(boxes[i], boxes[j])) continue;
          shift(labels[j], boxes[i].bottom - boxes[j].top + 2);
          boxes[j] = labels[j].getBoundingClientRect();
          moved = true;
        }
        others.forEach(function (node) {
          if (!overlap(node, boxes[i])) return;
          shift(labels[i], node.bottom - boxes[i].top + 2);
          boxes[i] = labels[i].getBoundingClientRect();
          moved = true;
        });
      }
      if (!moved) return;
    }
  }

  function showMessage(cls, text) {
    var diagram = byId("diagram");
    diagram.replaceChildren(el("div", { class: cls, text: text }));
    ["actorId", "sessionId", "machine", "currentState", "currentIds", "zoom"].forEach(function (k) { delete diagram.dataset[k]; });
    byId("zoom-tools").hidden = true;
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
      var svg = diagramSvg();
      var natural = svg.viewBox.baseVal;
      view.width = natural.width; view.height = natural.height;
      svg.removeAttribute("style");
      svg.setAttribute("width", "100%");
      svg.setAttribute("height", "100%");
      svg.setAttribute("preserveAspectRatio", "xMinYMin meet");
      var known = new Set(Object.keys(chart.stateIds).map(function (k) { return chart.stateIds[k]; }));
      (chart.nested || []).forEach(function (n) {
        Object.keys(n.stateIds).forEach(function (k) { known.add(n.stateIds[k]); });
      });
      var prefix = renderId + "-state-";
      diagram.querySelectorAll("g[id]").forEach(function (g) {
        if (g.id.indexOf(prefix) !== 0) return;
        var match = /^(.+)-\d+$/.exec(g.id.slice(prefix.length));
        if (match && known.has(match[1])) g.setAttribute("data-state-id", match[1]);
      });
      diagram.dataset.machine = chart.machineId;
      byId("zoom-tools").hidden = false;
      view.x = 0; view.y = 0; view.scale = 1;
      view.centered = null;
      applyView();
      separateLabels(svg);
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

  /** The latest actor of a nested machine under parent, if it still runs. */
  function nestedActor(parent, nested) {
    var best = null;
    model.actors.forEach(function (a) {
      if (a.parentSessionId === parent.sessionId && a.machineId === nested.machineId && a.status === "active" &&
        (best === null || a.updatedSeq > best.updatedSeq)) best = a;
    });
    return best;
  }

  function highlight(actor, chart) {
    var diagram = byId("diagram");
    var current = actor.current.slice(), active = actor.active.slice();
    (chart.nested || []).forEach(function (n) {
      var child = current.indexOf(n.stateId) >= 0 ? nestedActor(actor, n) : null;
      if (!child) return;
      current.splice(current.indexOf(n.stateId), 1);
      active.push(n.stateId);
      child.current.forEach(function (id) { current.push(n.prefix + id); });
      child.active.forEach(function (id) { active.push(n.prefix + id); });
    });
    var ids = current.join(" ");
    var moved = diagram.dataset.currentIds !== ids || diagram.dataset.sessionId !== actor.sessionId;
    var first = null;
    diagram.querySelectorAll("[data-state-id]").forEach(function (g) {
      var id = g.getAttribute("data-state-id");
      var isCurrent = current.indexOf(id) >= 0;
      g.classList.toggle("current", isCurrent);
      g.classList.toggle("active", active.indexOf(id) >= 0);
      if (isCurrent && first === null) first = g;
    });
    diagram.dataset.actorId = actor.id;
    diagram.dataset.sessionId = actor.sessionId;
    diagram.dataset.currentState = actor.state;
    diagram.dataset.currentIds = ids;
    if (moved && first !== null) reveal(first, view.centered !== actor.sessionId);
    if (first !== null) view.centered = actor.sessionId;
  }

  function renderDiagram(actor) {
    if (!actor) return showMessage("empty", "No state machine actors yet.");
    var chart = model.machines.get(actor.machineId);
    if (!chart) return showMessage("empty", "No chart for machine " + actor.machineId + ".");
    if (chart.mermaid === null) return showMessage("error", "No chart for " + chart.machineId + ": " + chart.error);
    if (ui.drawn === "error:" + chart.machineId) return;
    if (ui.drawn !== chart.machineId) return draw(chart);
    highlight(actor, chart);
  }
`;
