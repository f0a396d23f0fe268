// @ts-check
// The inspector page's script: it keeps a copy of the inspector's state from the server's Server-Sent
// Events (/events) and draws it: the actors as a tree, the selected actor's statechart (chart.js) and the
// events as a sequence diagram (sequence.js). The selected actor is the one clicked, else the most recently
// updated machine actor.
/** @import { ActorView, InspectorMessage } from "../protocol.js" */
import { renderDiagram, setupChart } from "./chart.js";
import { byId, el, inputById } from "./dom.js";
import { apply, model, ui } from "./model.js";
import { renderSequence } from "./sequence.js";

/** Renders once after a burst of messages. */
function schedule() {
  if (ui.scheduled) return;
  ui.scheduled = true;
  setTimeout(() => {
    ui.scheduled = false;
    render();
  }, 16);
}

/** @param {ActorView} a */
function visible(a) {
  return ui.showAll || a.machineId !== undefined;
}

/**
 * Visible actors as a tree: newest root first, each followed by its children in creation order.
 * @returns {Array<{ actor: ActorView; depth: number }>}
 */
function ordered() {
  const all = Array.from(model.actors.values()).filter(visible);
  const present = new Set(all.map((a) => a.sessionId));
  /** @type {Map<string, ActorView[]>} */
  const kids = new Map();
  /** @type {ActorView[]} */
  const roots = [];
  for (const a of all) {
    if (a.parentSessionId && present.has(a.parentSessionId)) {
      const siblings = kids.get(a.parentSessionId);
      if (siblings) siblings.push(a);
      else kids.set(a.parentSessionId, [a]);
    } else roots.push(a);
  }
  roots.sort((x, y) => y.seq - x.seq);
  /** @type {Array<{ actor: ActorView; depth: number }>} */
  const out = [];
  /** @param {ActorView} a @param {number} depth */
  function walk(a, depth) {
    out.push({ actor: a, depth });
    const children = (kids.get(a.sessionId) ?? []).sort((x, y) => x.seq - y.seq);
    for (const k of children) walk(k, depth + 1);
  }
  for (const r of roots) walk(r, 0);
  return out;
}

/**
 * The pinned actor while it exists, else the most recently updated machine actor.
 * @returns {ActorView | null}
 */
function selectedActor() {
  const pinned = ui.pinned && ui.selected !== null ? model.actors.get(ui.selected) : undefined;
  if (pinned) return pinned;
  ui.pinned = false;
  /** @type {ActorView | null} */
  let best = null;
  for (const a of model.actors.values()) {
    if (a.machineId !== undefined && (best === null || a.updatedSeq > best.updatedSeq)) best = a;
  }
  // An actor drawn inside its parent's chart is followed there.
  const parent = best?.parentSessionId ? model.actors.get(best.parentSessionId) : undefined;
  const chart = parent?.machineId !== undefined ? model.machines.get(parent.machineId) : undefined;
  const machineId = best?.machineId;
  if (parent && chart && (chart.nested ?? []).some((n) => n.machineId === machineId)) best = parent;
  ui.selected = best ? best.sessionId : null;
  return best;
}

/** @param {ActorView | null} selected */
function renderActors(selected) {
  const rows = ordered().map(({ actor: a, depth }) => {
    const idCell = el("td", { class: "id", title: a.id + (a.systemId ? " (" + a.systemId + ")" : "") });
    if (depth > 0) idCell.append(el("span", { class: "child", text: "  ".repeat(depth - 1) + "└" }));
    idCell.append(a.id);
    const row = el(
      "tr",
      {
        "data-testid": "actor",
        "data-actor-id": a.id,
        "data-session-id": a.sessionId,
        "data-machine": a.machineId ?? "",
        "data-state": a.state,
        "data-status": a.status,
        class:
          (a.status === "active" ? "" : "finished") +
          (selected && selected.sessionId === a.sessionId ? " selected" : ""),
      },
      [
        idCell,
        el("td", { text: a.machineId || "—" }),
        el("td", {}, a.state ? [el("span", { class: "state", text: a.state })] : []),
        el("td", { class: "status status-" + a.status, text: a.status, title: a.error || "" }),
      ],
    );
    row.addEventListener("click", () => {
      ui.selected = a.sessionId;
      ui.pinned = true;
      render();
    });
    return row;
  });
  byId("actors").replaceChildren(...rows);
  byId("no-actors").hidden = rows.length > 0;
  let live = 0;
  for (const a of model.actors.values()) if (a.status === "active") live += 1;
  byId("counts").textContent = model.actors.size + " actors · " + live + " active";
}

/** @param {ActorView | null} actor */
function renderSelection(actor) {
  const selection = byId("selection");
  selection.replaceChildren();
  if (actor) {
    selection.append(
      actor.id + " · " + actor.machineId + " · ",
      el("span", { class: "state", text: actor.state || "?" }),
      " " + actor.status,
    );
  }
  byId("follow").hidden = !ui.pinned;
}

function render() {
  const actor = selectedActor();
  renderActors(actor);
  renderSelection(actor);
  renderDiagram(actor, render);
  renderSequence(actor, render);
}

/** @param {"open" | "connecting" | "closed"} state */
function setConnection(state) {
  const pill = byId("connection");
  pill.dataset.state = state;
  pill.textContent = state === "open" ? "live" : state;
}

const showAll = inputById("show-all");
showAll.addEventListener("change", () => {
  ui.showAll = showAll.checked;
  render();
});
byId("follow").addEventListener("click", () => {
  ui.pinned = false;
  render();
});
const allEvents = inputById("all-events");
allEvents.addEventListener("change", () => {
  ui.allEvents = allEvents.checked;
  render();
});

const source = new EventSource("events");
source.onopen = () => setConnection("open");
source.onerror = () => setConnection(source.readyState === EventSource.CLOSED ? "closed" : "connecting");
source.addEventListener("message", (e) => {
  /** @type {InspectorMessage} */
  const message = JSON.parse(e.data);
  apply(message);
  schedule();
});
setupChart();
render();
