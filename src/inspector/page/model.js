// @ts-check
// The page's copy of the inspector's state, built from the server's messages, and the state of its views.
/** @import { ActorView, EventView, InspectorMessage, MachineChart, PageConfig } from "../protocol.js" */
import { byId } from "./dom.js";

/** @returns {PageConfig} */
function readConfig() {
  /** @type {Partial<PageConfig>} */
  const config = JSON.parse(byId("page-config").textContent ?? "");
  if (typeof config.maxEvents !== "number") throw new Error("the inspector page's config has no maxEvents");
  return { maxEvents: config.maxEvents };
}

/** The settings the server put into the page. */
export const config = readConfig();

export const model = {
  /** @type {Map<string, ActorView>} by session id */
  actors: new Map(),
  /** @type {Map<string, MachineChart>} by machine id */
  machines: new Map(),
  /** @type {EventView[]} the latest, oldest first */
  events: [],
};

/**
 * @typedef {object} ViewState
 * @property {string | null} selected The shown actor's session id.
 * @property {boolean} pinned Whether the user chose it; else the page follows the latest change.
 * @property {boolean} showAll Whether promise and callback actors are listed.
 * @property {string | null} drawn The machine whose chart is drawn, `error:<id>` when Mermaid failed on it.
 * @property {string | null} drawing The machine whose chart Mermaid is drawing.
 * @property {number} token Counts the drawings started: a drawing finishing after a newer one began is dropped.
 * @property {boolean} scheduled Whether a render is due.
 * @property {boolean} eventsDirty Whether the sequence view must be drawn again.
 * @property {number | null} event The seq of the event whose data is shown.
 * @property {boolean} allEvents Whether the sequence view shows every actor's events.
 * @property {string | null} sequenceScope Which events the sequence view last drew.
 */

/** @type {ViewState} */
export const ui = {
  selected: null,
  pinned: false,
  showAll: false,
  drawn: null,
  drawing: null,
  token: 0,
  scheduled: false,
  eventsDirty: true,
  event: null,
  allEvents: false,
  sequenceScope: null,
};

/** @param {InspectorMessage} m */
export function apply(m) {
  switch (m.kind) {
    case "hello":
      model.actors = new Map(m.actors.map((a) => [a.sessionId, a]));
      model.machines = new Map(m.machines.map((c) => [c.machineId, c]));
      model.events = m.events.slice(-config.maxEvents);
      ui.drawn = null;
      ui.eventsDirty = true;
      return;
    case "machine":
      model.machines.set(m.machine.machineId, m.machine);
      return;
    case "actor":
      model.actors.set(m.actor.sessionId, m.actor);
      return;
    case "drop":
      for (const id of m.sessionIds) model.actors.delete(id);
      return;
    case "event":
      model.events.push(m.event);
      if (model.events.length > config.maxEvents)
        model.events.splice(0, model.events.length - config.maxEvents);
      ui.eventsDirty = true;
      return;
  }
}
