import { fromPromise } from "xstate";
import { unprovided } from "./unprovided.js";

// The Discord side effects the collaboration machines invoke: placeholders the runtime replaces with
// `machine.provide({ actors })` (through its DiscordPort), tests with fakes. Outputs carry `at`, the
// wall-clock time the call completed.

export interface PostMessageInput {
  asAgentId: string;
  channelId: string;
  content: string;
  /** Exactly the users this message may ping. */
  mentionUserIds: string[];
  /** Stable per message; the runtime derives Discord's ≤ 25-char nonce from it, so a re-run posts once. */
  nonceKey: string;
}
export interface PostMessageOutput {
  messageId: string;
  at: number;
}

export interface CreateThreadInput {
  asAgentId: string;
  channelId: string;
  name: string;
  fromMessageId?: string;
}
export interface CreateThreadOutput {
  threadId: string;
  at: number;
}

export const postMessageActor = fromPromise<PostMessageOutput, PostMessageInput>(unprovided("postMessage"));
export const createThreadActor = fromPromise<CreateThreadOutput, CreateThreadInput>(
  unprovided("createThread"),
);
