// The statecharts: pure `setup()` definitions. Side effects are named actors the runtime provides,
// time arrives in their outputs, every wait is an `after` delay with a named delay.
export * from "./a2aFlowContext.js";
export * from "./a2aFlowMachine.js";
export {
  type CollaborateContext,
  type CollaborateErrorCode,
  type CollaborateEvent,
  type CollaborateInput,
  CollaborateInputSchema,
  type CollaborateOutput,
} from "./collaborateContext.js";
export * from "./collaborateMachine.js";
export * from "./cameAfter.js";
export * from "./discordActors.js";
export * from "./gatewayActors.js";
export * from "./MachineInputError.js";
export * from "./mentionMachine.js";
export * from "./pingPongContext.js";
export * from "./pingPongMachine.js";
export * from "./replyWaitMachine.js";
export type { FlowTrace } from "./schemas.js";
export * from "./transitions.js";
export * from "./statechartDocs.js";
export * from "./toMermaid.js";
