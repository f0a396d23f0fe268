import { asText } from "../InvalidInputError.js";

export interface AnnounceTarget {
  channel: string;
  to?: string;
}

export type AnnounceSkipReason = "no_target" | "empty_reply" | "internal_channel" | "self";

export interface AnnounceParams {
  announceTarget: AnnounceTarget | null;
  requesterSessionKey?: string;
  targetSessionKey: string;
  latestReply?: string;
}

export interface AnnounceDecision {
  run: boolean;
  reason?: AnnounceSkipReason;
}

/** Whether the announce step is worth an LLM call, and why not when it is not. */
export function decideAnnounce(p: AnnounceParams): AnnounceDecision {
  const target = p?.announceTarget;
  if (target == null || typeof target !== "object") return { run: false, reason: "no_target" };
  if (!asText(p.latestReply)?.trim()) return { run: false, reason: "empty_reply" };
  if (target.channel === "internal") return { run: false, reason: "internal_channel" };
  const requester = asText(p.requesterSessionKey);
  if (requester !== undefined && requester === p.targetSessionKey) return { run: false, reason: "self" };
  return { run: true };
}

/** `decideAnnounce(p).run`: whether the announce step runs. */
export function shouldRunAnnounce(p: AnnounceParams): boolean {
  return decideAnnounce(p).run;
}
