import { requireWholeNumber } from "../InvalidInputError.js";
import { type ClassifiedIntent, USE_CONFIGURED_TURNS } from "./A2AMessageIntent.js";

export interface EffectiveTurnsParams {
  configMaxTurns: number;
  classifiedIntent: Pick<ClassifiedIntent, "intent" | "suggestedTurns">;
  explicitSkipPingPong: boolean;
}

/** How many ping-pong turns a conversation gets: never more than the config allows. */
export function resolveEffectivePingPongTurns(p: EffectiveTurnsParams): number {
  const configMaxTurns = requireWholeNumber(
    "resolveEffectivePingPongTurns",
    "configMaxTurns",
    p?.configMaxTurns,
  );
  if (p.explicitSkipPingPong === true) return 0;
  const suggested = p.classifiedIntent?.suggestedTurns;
  if (suggested === 0) return 0;
  if (suggested === USE_CONFIGURED_TURNS) return configMaxTurns;
  const turns = requireWholeNumber(
    "resolveEffectivePingPongTurns",
    "classifiedIntent.suggestedTurns",
    suggested,
  );
  return Math.min(turns, configMaxTurns);
}
