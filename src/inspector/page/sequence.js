// @ts-check
// The inspector page's sequence view: a lifeline per actor (and one for events from outside any actor), an
// arrow per event from its sender to its receiver (a loop when an actor sends to itself), time going down,
// the latest at the bottom and kept in view while the view is scrolled to the end. Clicking an event (or
// Enter on it) shows its data beside the view. It shows the events of the selected actor's family (its root
// actor and every descendant), or of all actors when asked.
/** @import { ActorView, EventView } from "../protocol.js" */
import { byId, el, svgEl } from "./dom.js";
import { config, model, ui } from "./model.js";

const LANE = 124;
const GUTTER = 92;
const ROW = 30;
const TOP = 6;
/** The lifeline of events sent from outside any actor. */
const EXTERNAL = "external";

/**
 * @typedef {object} Lane
 * @property {string} sessionId
 * @property {string} id
 * @property {string | undefined} machineId
 * @property {number} seq The actor's order of creation (outside and unknown actors last).
 * @property {number} order The order the events name it in.
 * @property {number} x Its centre.
 */

/** @param {number} n @param {number} width */
function pad(n, width) {
  return String(n).padStart(width, "0");
}

/** @param {number} at */
function time(at) {
  const d = new Date(at);
  return (
    pad(d.getHours(), 2) +
    ":" +
    pad(d.getMinutes(), 2) +
    ":" +
    pad(d.getSeconds(), 2) +
    "." +
    pad(d.getMilliseconds(), 3)
  );
}

/**
 * The lifelines: outside first, then every actor the events name, in the order they were created.
 * @param {EventView[]} events
 * @returns {Lane[]}
 */
function lifelines(events) {
  /** @type {Map<string, Lane>} */
  const lanes = new Map();
  /** @param {string} sessionId @param {string} id */
  function add(sessionId, id) {
    if (lanes.has(sessionId)) return;
    const actor = model.actors.get(sessionId);
    lanes.set(sessionId, {
      sessionId,
      id,
      machineId: actor ? actor.machineId : undefined,
      seq: actor ? actor.seq : Infinity,
      order: lanes.size,
      x: 0,
    });
  }
  for (const e of events) {
    if (e.sourceSessionId === undefined) add(EXTERNAL, EXTERNAL);
    else add(e.sourceSessionId, e.sourceId ?? "");
    add(e.targetSessionId, e.targetId);
  }
  const list = Array.from(lanes.values()).sort((a, b) => {
    if (a.sessionId === EXTERNAL || b.sessionId === EXTERNAL) return a.sessionId === EXTERNAL ? -1 : 1;
    return a.seq - b.seq || a.order - b.order;
  });
  list.forEach((lane, i) => (lane.x = GUTTER + LANE * i + LANE / 2));
  return list;
}

/** @param {string} text @param {number} max */
function short(text, max) {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

/**
 * The session ids of actor's root ancestor and all its descendants.
 * @param {ActorView} actor
 * @returns {{ root: ActorView; members: Set<string> }}
 */
function family(actor) {
  let root = actor;
  for (;;) {
    const parent = root.parentSessionId ? model.actors.get(root.parentSessionId) : undefined;
    if (!parent) break;
    root = parent;
  }
  const members = new Set([root.sessionId]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const a of model.actors.values()) {
      if (a.parentSessionId && members.has(a.parentSessionId) && !members.has(a.sessionId)) {
        members.add(a.sessionId);
        grew = true;
      }
    }
  }
  return { root, members };
}

/**
 * Draws the events again when they or the family shown changed.
 * @param {ActorView | null} selected
 * @param {() => void} render renders the page again, once an event is chosen
 */
export function renderSequence(selected, render) {
  const scope = ui.allEvents || !selected ? null : family(selected);
  const scopeKey = scope ? scope.root.sessionId + ":" + scope.members.size : "all";
  if (!ui.eventsDirty && scopeKey === ui.sequenceScope) return;
  ui.eventsDirty = false;
  ui.sequenceScope = scopeKey;
  const scroller = byId("sequence-scroll");
  const atEnd = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 40;
  const events =
    scope === null
      ? model.events
      : model.events.filter(
          (e) =>
            scope.members.has(e.targetSessionId) ||
            (e.sourceSessionId !== undefined && scope.members.has(e.sourceSessionId)),
        );
  byId("event-scope").textContent =
    scope === null ? "all actors" : "of " + scope.root.id + " and its children";
  const lanes = lifelines(events);
  const byLane = new Map(lanes.map((l) => [l.sessionId, l]));
  const width = GUTTER + LANE * lanes.length + 40;
  const height = TOP + ROW * events.length + 16;
  const heads = lanes.map((l) =>
    el(
      "div",
      {
        class: "lane-head",
        "data-testid": "lifeline",
        "data-actor-id": l.id,
        "data-session-id": l.sessionId,
        title: l.id,
        style: "left:" + (l.x - LANE / 2 + 4) + "px;width:" + (LANE - 8) + "px",
      },
      [
        el("span", { class: "lane-id", text: l.sessionId === EXTERNAL ? "outside" : short(l.id, 15) }),
        el("span", {
          class: "lane-machine",
          text: l.sessionId === EXTERNAL ? "no actor" : l.machineId || "promise/callback",
        }),
      ],
    ),
  );
  const headRow = el("div", { class: "lane-heads", style: "width:" + width + "px" }, heads);
  const svg = svgEl("svg", { width, height, class: "sequence", "data-testid": "sequence" });
  for (const l of lanes)
    svg.append(svgEl("line", { class: "lifeline", x1: l.x, x2: l.x, y1: 0, y2: height }));
  events.forEach((e, i) => {
    const from = byLane.get(e.sourceSessionId === undefined ? EXTERNAL : e.sourceSessionId);
    const to = byLane.get(e.targetSessionId);
    if (!from || !to) return; // lifelines() made one for each sender and receiver
    const top = TOP + ROW * i;
    const y = top + 21;
    const self = from === to;
    const shape = self
      ? svgEl("path", {
          class: "arrow",
          d: "M" + to.x + " " + (top + 9) + " h 24 v 12 h -22",
          "marker-end": "url(#head)",
        })
      : svgEl("line", {
          class: "arrow",
          x1: from.x,
          y1: y,
          x2: to.x + (to.x > from.x ? -3 : 3),
          y2: y,
          "marker-end": "url(#head)",
        });
    const labelX = self ? to.x + 32 : (from.x + to.x) / 2;
    const row = svgEl(
      "g",
      {
        class: "message" + (ui.event === e.seq ? " selected" : ""),
        tabindex: "0",
        role: "button",
        "data-testid": "event",
        "data-seq": e.seq,
        "data-type": e.type,
        "data-source": from.id,
        "data-target": to.id,
        "data-source-session-id": from.sessionId,
        "data-target-session-id": to.sessionId,
        "data-x1": from.x,
        "data-x2": to.x,
      },
      [
        svgEl("rect", { class: "hit", x: 0, y: top, width, height: ROW }),
        svgEl("text", { class: "time", x: 8, y: y + 4, text: time(e.at) }),
        shape,
        svgEl("text", {
          class: "label",
          x: labelX,
          y: self ? top + 19 : y - 5,
          "text-anchor": self ? "start" : "middle",
          text: short(e.type, self ? 40 : Math.max(28, Math.floor(Math.abs(to.x - from.x) / 7))),
        }),
        svgEl("title", { text: e.type + " · " + from.id + " → " + to.id }),
      ],
    );
    function choose() {
      ui.event = e.seq;
      ui.eventsDirty = true;
      render();
    }
    row.addEventListener("click", choose);
    row.addEventListener("keydown", (k) => {
      if (k.key === "Enter" || k.key === " ") {
        k.preventDefault();
        choose();
      }
    });
    svg.append(row);
  });
  const arrowHead = svgEl(
    "marker",
    {
      id: "head",
      viewBox: "0 0 10 10",
      refX: "9",
      refY: "5",
      markerWidth: "7",
      markerHeight: "7",
      orient: "auto-start-reverse",
    },
    [svgEl("path", { d: "M0 0 L10 5 L0 10 z", class: "head" })],
  );
  svg.prepend(svgEl("defs", {}, [arrowHead]));
  byId("sequence").replaceChildren(headRow, svg);
  byId("event-count").textContent =
    events.length + (model.events.length === config.maxEvents ? " (latest)" : "");
  byId("no-events").hidden = events.length > 0;
  if (atEnd) scroller.scrollTop = scroller.scrollHeight;
  renderEventDetail();
}

function renderEventDetail() {
  const e = model.events.find((x) => x.seq === ui.event);
  const box = byId("event-detail");
  if (!e) {
    box.replaceChildren(el("div", { class: "empty", text: "Click an event to see its data." }));
    delete box.dataset.seq;
    return;
  }
  let data = e.data || "";
  try {
    data = data ? JSON.stringify(JSON.parse(data), null, 2) : "(no data)";
  } catch {
    // A preview cut short is not JSON: it is shown as it is.
  }
  box.dataset.seq = String(e.seq);
  box.replaceChildren(
    el("div", { class: "detail-type", text: e.type }),
    el("div", {
      class: "detail-meta",
      text: time(e.at) + " · " + (e.sourceId || EXTERNAL) + " → " + e.targetId,
    }),
    el("pre", { "data-testid": "event-data", text: data }),
  );
}
