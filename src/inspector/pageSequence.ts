// The inspector page's sequence view (part of app.js, see page.ts): a lifeline per actor (and one for events
// from outside any actor), an arrow per event from its sender to its receiver (a loop when an actor sends to
// itself), time going down, the latest at the bottom and kept in view while the view is scrolled to the end.
// Clicking an event (or Enter on it) shows its data beside the view. It shows the events of the selected
// actor's family (its root actor and every descendant), or of all actors when asked.

export const SEQUENCE_SCRIPT = String.raw`
  var SVG_NS = "http://www.w3.org/2000/svg";
  var LANE = 124, GUTTER = 92, ROW = 30, TOP = 6;
  var EXTERNAL = "external";

  function svgEl(tag, attrs, children) {
    var node = document.createElementNS(SVG_NS, tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (attrs[k] !== undefined && attrs[k] !== null) node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { node.appendChild(c); });
    return node;
  }

  function pad(n, width) { return String(n).padStart(width, "0"); }
  function time(at) {
    var d = new Date(at);
    return pad(d.getHours(), 2) + ":" + pad(d.getMinutes(), 2) + ":" + pad(d.getSeconds(), 2) + "." + pad(d.getMilliseconds(), 3);
  }

  /** The lifelines: outside first, then every actor the events name, in the order they were created. */
  function lifelines(events) {
    var lanes = new Map();
    function add(sessionId, id) {
      if (lanes.has(sessionId)) return;
      var actor = model.actors.get(sessionId);
      lanes.set(sessionId, { sessionId: sessionId, id: id, machineId: actor ? actor.machineId : undefined, seq: actor ? actor.seq : Infinity, order: lanes.size });
    }
    events.forEach(function (e) {
      if (e.sourceSessionId === undefined) add(EXTERNAL, EXTERNAL); else add(e.sourceSessionId, e.sourceId);
      add(e.targetSessionId, e.targetId);
    });
    var list = Array.from(lanes.values()).sort(function (a, b) {
      if (a.sessionId === EXTERNAL || b.sessionId === EXTERNAL) return a.sessionId === EXTERNAL ? -1 : 1;
      return a.seq - b.seq || a.order - b.order;
    });
    list.forEach(function (lane, i) { lane.x = GUTTER + LANE * i + LANE / 2; });
    return list;
  }

  function short(text, max) { return text.length > max ? text.slice(0, max - 1) + "…" : text; }

  /** The session ids of actor's root ancestor and all its descendants. */
  function family(actor) {
    var root = actor;
    while (root.parentSessionId && model.actors.has(root.parentSessionId)) root = model.actors.get(root.parentSessionId);
    var members = new Set([root.sessionId]);
    var grew = true;
    while (grew) {
      grew = false;
      model.actors.forEach(function (a) {
        if (a.parentSessionId && members.has(a.parentSessionId) && !members.has(a.sessionId)) { members.add(a.sessionId); grew = true; }
      });
    }
    return { root: root, members: members };
  }

  function renderSequence(selected) {
    var scope = ui.allEvents || !selected ? null : family(selected);
    var scopeKey = scope ? scope.root.sessionId + ":" + scope.members.size : "all";
    if (!ui.eventsDirty && scopeKey === ui.sequenceScope) return;
    ui.eventsDirty = false;
    ui.sequenceScope = scopeKey;
    var scroller = byId("sequence-scroll");
    var atEnd = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 40;
    var events = scope === null ? model.events : model.events.filter(function (e) {
      return scope.members.has(e.targetSessionId) || (e.sourceSessionId !== undefined && scope.members.has(e.sourceSessionId));
    });
    byId("event-scope").textContent = scope === null ? "all actors" : "of " + scope.root.id + " and its children";
    var lanes = lifelines(events);
    var byLane = new Map(lanes.map(function (l) { return [l.sessionId, l]; }));
    var width = GUTTER + LANE * lanes.length + 40;
    var height = TOP + ROW * events.length + 16;
    var heads = lanes.map(function (l) {
      return el("div", { class: "lane-head", "data-testid": "lifeline", "data-actor-id": l.id, "data-session-id": l.sessionId, title: l.id, style: "left:" + (l.x - LANE / 2 + 4) + "px;width:" + (LANE - 8) + "px" }, [
        el("span", { class: "lane-id", text: l.sessionId === EXTERNAL ? "outside" : short(l.id, 15) }),
        el("span", { class: "lane-machine", text: l.sessionId === EXTERNAL ? "no actor" : (l.machineId || "promise/callback") }),
      ]);
    });
    var headRow = el("div", { class: "lane-heads", style: "width:" + width + "px" }, heads);
    var svg = svgEl("svg", { width: width, height: height, class: "sequence", "data-testid": "sequence" });
    lanes.forEach(function (l) {
      svg.appendChild(svgEl("line", { class: "lifeline", x1: l.x, x2: l.x, y1: 0, y2: height }));
    });
    events.forEach(function (e, i) {
      var from = byLane.get(e.sourceSessionId === undefined ? EXTERNAL : e.sourceSessionId);
      var to = byLane.get(e.targetSessionId);
      var top = TOP + ROW * i, y = top + 21;
      var self = from === to;
      var shape = self
        ? svgEl("path", { class: "arrow", d: "M" + to.x + " " + (top + 9) + " h 24 v 12 h -22", "marker-end": "url(#head)" })
        : svgEl("line", { class: "arrow", x1: from.x, y1: y, x2: to.x + (to.x > from.x ? -3 : 3), y2: y, "marker-end": "url(#head)" });
      var labelX = self ? to.x + 32 : (from.x + to.x) / 2;
      var row = svgEl("g", {
        class: "message" + (ui.event === e.seq ? " selected" : ""), tabindex: "0", role: "button",
        "data-testid": "event", "data-seq": e.seq, "data-type": e.type, "data-source": from.id, "data-target": to.id,
        "data-source-session-id": from.sessionId, "data-target-session-id": to.sessionId,
        "data-x1": from.x, "data-x2": to.x,
      }, [
        svgEl("rect", { class: "hit", x: 0, y: top, width: width, height: ROW }),
        svgEl("text", { class: "time", x: 8, y: y + 4, text: time(e.at) }),
        shape,
        svgEl("text", { class: "label", x: labelX, y: self ? top + 19 : y - 5, "text-anchor": self ? "start" : "middle", text: short(e.type, self ? 40 : Math.max(28, Math.floor(Math.abs(to.x - from.x) / 7))) }),
        svgEl("title", { text: e.type + " · " + from.id + " → " + to.id }),
      ]);
      function choose() { ui.event = e.seq; ui.eventsDirty = true; render(); }
      row.addEventListener("click", choose);
      row.addEventListener("keydown", function (k) { if (k.key === "Enter" || k.key === " ") { k.preventDefault(); choose(); } });
      svg.appendChild(row);
    });
    svg.insertBefore(svgEl("defs", {}, [svgEl("marker", { id: "head", viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" }, [svgEl("path", { d: "M0 0 L10 5 L0 10 z", class: "head" })])]), svg.firstChild);
    byId("sequence").replaceChildren(headRow, svg);
    byId("event-count").textContent = events.length + (model.events.length === MAX_EVENTS ? " (latest)" : "");
    byId("no-events").hidden = events.length > 0;
    if (atEnd) scroller.scrollTop = scroller.scrollHeight;
    renderEventDetail();
  }

  function renderEventDetail() {
    var e = model.events.find(function (x) { return x.seq === ui.event; });
    var box = byId("event-detail");
    if (!e) {
      box.replaceChildren(el("div", { class: "empty", text: "Click an event to see its data." }));
      delete box.dataset.seq;
      return;
    }
    var data = e.data || "";
    try { data = data ? JSON.stringify(JSON.parse(data), null, 2) : "(no data)"; } catch (_) { /* a cut preview stays as it is */ }
    box.dataset.seq = String(e.seq);
    box.replaceChildren(
      el("div", { class: "detail-type", text: e.type }),
      el("div", { class: "detail-meta", text: time(e.at) + " · " + (e.sourceId || EXTERNAL) + " → " + e.targetId }),
      el("pre", { "data-testid": "event-data", text: data }),
    );
  }
`;
