// The entry point `a2a-statecharts/inspector`: the offline statechart inspector. Start it and pass it as
// `createA2ARuntime({ inspect })` (or `createDurableHost({ inspect })`); open its `url` in a browser.
export { type InspectorServer, startInspectorServer } from "./InspectorServer.js";
export { MAX_ACTORS, MAX_EVENTS } from "./InspectorModel.js";
export type { ActorView, EventView, InspectorHello, InspectorMessage, MachineChart } from "./protocol.js";
