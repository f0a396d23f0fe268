/** What a message between agents is for; decides how many ping-pong turns it gets. */
export enum A2AMessageIntent {
  NOTIFICATION = "notification",
  QUESTION = "question",
  COLLABORATION = "collaboration",
  ESCALATION = "escalation",
  RESULT_REPORT = "result_report",
}

/** `suggestedTurns` of -1 means "as many as the config allows" (collaboration). */
export const USE_CONFIGURED_TURNS = -1;

export interface ClassifiedIntent {
  intent: A2AMessageIntent;
  suggestedTurns: number;
  confidence: number;
}
