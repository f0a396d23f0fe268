import { z } from "zod";
import { A2AMessageIntent } from "../services/index.js";

// Field schemas shared by the machines' input schemas.
export const nonEmpty = z.string().trim().min(1);
export const positiveMs = z.int().positive();
export const epochMs = z.number().finite().nonnegative();
export const intentSchema = z.enum(A2AMessageIntent);

/** What every event a flow emits carries in its envelope, and what a2a.send reports. */
export const FlowTraceSchema = z.object({
  conversationId: nonEmpty,
  routeKey: z.string().optional(),
  fromAgent: nonEmpty,
  toAgent: nonEmpty,
  requesterSessionKey: z.string().optional(),
  targetSessionKey: nonEmpty,
  messageIntent: intentSchema,
  mode: z.enum(["sync", "async"]).optional(),
});
export type FlowTrace = z.output<typeof FlowTraceSchema>;

export const RetryPolicySchema = z.object({
  enabled: z.boolean(),
  baseBackoffMs: positiveMs,
  maxBackoffMs: positiveMs,
});

export function envelopeOf(trace: FlowTrace, at: number) {
  return {
    ts: at,
    conversationId: trace.conversationId,
    ...(trace.routeKey === undefined ? {} : { routeKey: trace.routeKey }),
    fromAgent: trace.fromAgent,
    toAgent: trace.toAgent,
  };
}
