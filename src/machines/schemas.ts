import { z } from "zod";
import { intentSchema } from "../policies/index.js";
import { LOCALES, messageCatalog } from "../policies/messages/messageCatalog.js";
import type { MessageCatalog } from "../policies/messages/messageKeys.js";

// Field schemas shared by the machines' input schemas.
export const nonEmpty = z.string().trim().min(1);
export const positiveMs = z.int().positive();
export const epochMs = z.number().finite().nonnegative();

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
  /**
   * Caps each error class's maxAttempts (config `retry.maxAttempts`). Absent, as in a flow stored before
   * the cap existed: no cap, each class's own limit.
   */
  maxAttempts: z.int().min(1).optional(),
  baseBackoffMs: positiveMs,
  maxBackoffMs: positiveMs,
});

/** The config's `locale` and `messages`, fixed as a flow starts; absent (older flows): Korean. */
export const LanguageSchema = z.object({
  locale: z.enum(LOCALES).optional(),
  messages: z.record(z.string(), z.string()).optional(),
});
export type Language = z.output<typeof LanguageSchema>;

export function catalogOf(language: Language | undefined): MessageCatalog {
  return messageCatalog(language ?? {});
}

/** `fields` without its undefined values: how an optional property is left out rather than set to undefined. */
export function defined<T extends Record<string, unknown>>(
  fields: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as never;
}

export function envelopeOf(trace: FlowTrace, at: number) {
  return {
    ts: at,
    conversationId: trace.conversationId,
    ...defined({ routeKey: trace.routeKey }),
    fromAgent: trace.fromAgent,
    toAgent: trace.toAgent,
  };
}
