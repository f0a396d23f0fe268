// The entry point `a2a-statecharts/inspector`: the offline statechart inspector. Start it and pass it as
// `createA2ARuntime({ inspect })` (or `createDurableHost({ inspect })`); open its `url` in a browser.
export {
  type ActorView,
  type EventView,
  type InspectorHello,
  type InspectorMessage,
  type InspectorServer,
  type MachineChart,
  MAX_ACTORS,
  MAX_EVENTS,
  startInspectorServer,
} from "./InspectorServer.js";
