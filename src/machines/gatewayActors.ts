import { fromPromise } from "xstate";
import { unprovided } from "./actorEvents.js";

// The gateway side effects the flow machines invoke: placeholders the runtime (or a test) replaces with
// `machine.provide({ actors })`. Every output carries `at`, its completion time: machines read no clock.

/** `sendMessage` (provided as `actors.sendMessage`): start an agent run with a message. */
export interface SendMessageInput {
  sessionKey: string;
  message: string;
  extraSystemPrompt?: string;
  /** The same for every resend of one message, so the gateway runs it at most once per run. */
  idempotencyKey: string;
}
/** The run `sendMessage` started, and when. */
export interface SendMessageOutput {
  runId: string;
  at: number;
}

/** `agentWait`: wait up to `timeoutMs` for a run to end. */
export interface AgentWaitInput {
  runId: string;
  timeoutMs: number;
}
/** How the run's wait ended, as the gateway reports it. */
export interface AgentWaitOutput {
  status: "ok" | "timeout" | "not_found" | "error";
  error?: string;
  at: number;
  /** How long the wait took, measured on the clock; the requested timeout is assumed when absent. */
  waitedMs?: number;
}

/** `readReply`: read the latest assistant reply of a session. */
export interface ReadReplyInput {
  sessionKey: string;
}
/** The reply read, absent when the session has none. */
export interface ReadReplyOutput {
  reply?: string;
  at: number;
}

/** One agent turn (send, wait, read) as one side effect: a ping-pong step or the announce step. */
export interface AgentStepInput {
  sessionKey: string;
  message: string;
  extraSystemPrompt: string;
  idempotencyKey: string;
}
/** Why a step gave no reply: a failed call (`gateway`, agentWait's too; `read`) or a run not ok (`wait`). */
export interface AgentStepError {
  source: "gateway" | "wait" | "read";
  status?: string;
  message?: string;
}
/** A step that ran but produced no text has neither `reply` nor `error`. */
export interface AgentStepOutput {
  reply?: string;
  error?: AgentStepError;
  at: number;
}

/** Posts the announce text to the announce target as the target agent (a no-op where there is no channel). */
export interface PostAnnouncementInput {
  targetSessionKey: string;
  announceTarget: { channel: string; to?: string };
  text: string;
  /** Stable per flow, so a post re-run after a restart is not posted twice. */
  nonce: string;
}
/** When the announcement was posted (or skipped for want of a channel). */
export interface PostAnnouncementOutput {
  at: number;
}

export const sendMessageActor = fromPromise<SendMessageOutput, SendMessageInput>(unprovided("sendMessage"));
export const agentWaitActor = fromPromise<AgentWaitOutput, AgentWaitInput>(unprovided("agentWait"));
export const readReplyActor = fromPromise<ReadReplyOutput, ReadReplyInput>(unprovided("readReply"));
export const agentStepActor = fromPromise<AgentStepOutput, AgentStepInput>(unprovided("agentStep"));
export const postAnnouncementActor = fromPromise<PostAnnouncementOutput, PostAnnouncementInput>(
  unprovided("postAnnouncement"),
);
