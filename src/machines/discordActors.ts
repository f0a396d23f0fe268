import { fromPromise } from "xstate";
import type { CollaborationText } from "../policies/collaboration/collaborationTexts.js";
import { unprovided } from "./actorEvents.js";

// The Discord side effects the collaboration machines invoke: placeholders, replaced as the gateway ones
// are (the runtime's through its DiscordPort). Outputs carry `at`, the call's completion time.

/** `postMessage` (provided as `actors.postMessage`): post a message as an agent's bot. */
export interface PostMessageInput {
  asAgentId: string;
  channelId: string;
  /** What the post says: the runtime writes it in the language configured when it posts. */
  text: CollaborationText;
  /** Exactly the users this message may ping. */
  mentionUserIds: string[];
  /** Stable per message; the runtime derives Discord's ≤ 25-char nonce from it, so a re-run posts once. */
  nonceKey: string;
}
/** The posted message's id, and when. */
export interface PostMessageOutput {
  messageId: string;
  at: number;
}

/** `createThread`: open a public thread as an agent's bot, from a message or on its own. */
export interface CreateThreadInput {
  asAgentId: string;
  channelId: string;
  /** What the thread's name says: the runtime writes it in the language configured when it opens the thread. */
  text: CollaborationText;
  fromMessageId?: string;
}
/** The new thread's id, and when. */
export interface CreateThreadOutput {
  threadId: string;
  at: number;
}

export const postMessageActor = fromPromise<PostMessageOutput, PostMessageInput>(unprovided("postMessage"));
export const createThreadActor = fromPromise<CreateThreadOutput, CreateThreadInput>(
  unprovided("createThread"),
);
