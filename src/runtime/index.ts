export * from "./createA2ARuntime.js";
export * from "./nonce.js";
export type * from "./ports.js";
export { MAX_TIMEOUT_SECONDS } from "./inputSchemas.js";
export { MissingPortError } from "./MissingPortError.js";
