// The package root: everything API.md names, and the types a gateway needs to embed it.
export * from "./discord/index.js";
export * from "./machines/index.js";
export * from "./runtime/index.js";
export * from "./services/index.js";
