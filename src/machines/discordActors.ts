import { fromPromise } from "xstate";
import {
  type CollaborationText,
  renderCollaborationText,
} from "../policies/collaboration/collaborationTexts.js";
import { unprovided } from "./unprovided.js";

// The Discord side effects the collaboration machines invoke: placeholders the runtime replaces with
// `machine.provide({ actors })` (through its DiscordPort), tests with fakes. Outputs carry `at`, the
// wall-clock time the call completed.

/** `postMessage` (provided as `actors.postMessage`): post a message as an agent's bot. */
export interface PostMessageInput {
  asAgentId: string;
  channelId: string;
  /** The text in the default language (Korean); the runtime posts `text` instead when it is given. */
  content: string;
  /** What `content` says, for the runtime to write in the configured language. */
  text?: CollaborationText;
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
  /** The name in the default language (Korean); the runtime names the thread from `text` when it is given. */
  name: string;
  /** What `name` says, for the runtime to write in the configured language. */
  text?: CollaborationText;
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

/** A post's `content` in the default language, with its `text` for the runtime to write in the configured one. */
export function postText(text: CollaborationText): Pick<PostMessageInput, "content" | "text"> {
  return { content: renderCollaborationText(text), text };
}
