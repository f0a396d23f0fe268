import { fromPromise } from "xstate";
import {
  type AgentWaitInput,
  type AgentWaitOutput,
  a2aFlowMachine,
  type CreateThreadInput,
  type CreateThreadOutput,
  collaborateMachine,
  mentionMachine,
  type PostAnnouncementInput,
  type PostAnnouncementOutput,
  type PostMessageInput,
  type PostMessageOutput,
  pingPongMachine,
  type ReadReplyInput,
  type ReadReplyOutput,
  replyWaitMachine,
  type SendMessageInput,
  type SendMessageOutput,
} from "../machines/index.js";
import { announceChannelId, type RateLimiter, renderCollaborationText } from "../policies/index.js";
import type { MessageCatalog } from "../policies/messages/messageKeys.js";
import { agentStepActor } from "./agentStep.js";
import { throughDiscordBucket } from "./discordBuckets.js";
import type { EarlierPosts } from "./EarlierPosts.js";
import { discordNonce } from "./nonce.js";
import type { DiscordPort, GatewayPort } from "./ports.js";

export interface SideEffectDeps {
  gateway?: GatewayPort;
  discord?: DiscordPort;
  now: () => number;
  /** Default Korean. */
  messages?: MessageCatalog;
  limiters: { threadCreation: RateLimiter; messages: RateLimiter };
  /** The thread-creation limit's key for a parent channel: its guild's (Discord limits per guild). */
  threadCreationBucket: (parentChannelId: string) => Promise<string>;
  /** The agent id in a session key `agent:{id}:…`. */
  agentOfSession: (sessionKey: string) => string;
  onThreadCreated?: (p: { threadId: string; channelId: string }) => void;
  onSystemMessage?: (messageId: string) => void;
  /** A system post is about to be sent; the returned function is called once Discord has answered or failed. */
  onSystemPosting?: (post: { channelId: string; asAgentId: string; content: string }) => () => void;
  /** A discord_send's mention is about to be posted in `threadId`: it opens a new bot↔bot exchange there. */
  onMentionPosting?: (threadId: string) => void;
  /** Finds a post a crash left unrecorded, once Discord's nonce window is past (see EarlierPosts). */
  earlierPosts?: EarlierPosts;
}

/** A post through the channel's rate limit, once (see EarlierPosts); call as the effect starts. */
function sendOnce(
  deps: SideEffectDeps,
  post: { asAgentId: string; channelId: string; content: string; nonceKey: string; mentionUserIds: string[] },
): () => Promise<{ messageId: string }> {
  const { asAgentId, channelId, content, mentionUserIds } = post;
  const nonce = discordNonce(post.nonceKey);
  const send = () =>
    throughDiscordBucket(deps.limiters.messages, channelId, () =>
      required(deps.discord, "discord").sendMessage({ asAgentId, channelId, content, mentionUserIds, nonce }),
    );
  const earlier = deps.earlierPosts;
  if (earlier === undefined) return send;
  earlier.noteStart(post.nonceKey);
  return () => earlier.postOnce({ ...post, nonce }, send);
}

/** Runs a side effect, stamping a failure with its time (`at`): machines read no clock. */
async function stamped<T>(now: () => number, effect: () => Promise<T>): Promise<T> {
  try {
    return await effect();
  } catch (error) {
    const at = now();
    if (typeof error === "object" && error !== null) throw Object.assign(error, { at });
    throw Object.assign(new Error(String(error)), { at });
  }
}

/** Discord's answer when a message already has its thread (HTTP 400, JSON error code 160004). */
const THREAD_ALREADY_CREATED = 160004;

/** Opens the thread; a re-run hearing "already created" takes the starter message's id, the thread's. */
async function createThreadOnce(
  discord: DiscordPort,
  input: Parameters<DiscordPort["createThread"]>[0],
): ReturnType<DiscordPort["createThread"]> {
  try {
    return await discord.createThread(input);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === THREAD_ALREADY_CREATED && input.fromMessageId !== undefined) {
      return { threadId: input.fromMessageId };
    }
    throw error;
  }
}

function required<T>(port: T | undefined, name: string): T {
  if (port === undefined) throw new Error(`no ${name} configured: pass it to createA2ARuntime({ ${name} })`);
  return port;
}

/** The flow machine wired to the GatewayPort (and to Discord for announcements). */
export function provideFlow(deps: SideEffectDeps) {
  const { now } = deps;
  const gateway = () => required(deps.gateway, "gateway");
  const step = agentStepActor({ gateway, now });
  return a2aFlowMachine.provide({
    actors: {
      replyWait: replyWaitMachine.provide({
        actors: {
          sendMessage: fromPromise<SendMessageOutput, SendMessageInput>(({ input }) =>
            stamped(now, async () => ({ runId: (await gateway().agent(input)).runId, at: now() })),
          ),
          agentWait: fromPromise<AgentWaitOutput, AgentWaitInput>(({ input }) =>
            stamped(now, async () => {
              const started = now();
              const result = await gateway().agentWait(input);
              const at = now();
              return { ...result, at, waitedMs: at - started };
            }),
          ),
          readReply: fromPromise<ReadReplyOutput, ReadReplyInput>(({ input }) =>
            stamped(now, async () => {
              const reply = await gateway().readLatestAssistantReply(input);
              return { ...(reply === undefined ? {} : { reply }), at: now() };
            }),
          ),
        },
      }),
      pingPong: pingPongMachine.provide({ actors: { agentStep: step } }),
      announceStep: step,
      postAnnouncement: fromPromise<PostAnnouncementOutput, PostAnnouncementInput>(({ input }) => {
        const channelId = announceChannelId(input.announceTarget);
        const asAgentId = deps.agentOfSession(input.targetSessionKey);
        const post =
          channelId === undefined || !deps.discord
            ? undefined
            : sendOnce(deps, {
                asAgentId,
                channelId,
                content: input.text,
                nonceKey: input.nonce,
                mentionUserIds: [],
              });
        return stamped(now, async () => {
          await post?.();
          return { at: now() };
        });
      }),
    },
  });
}

/** The collaboration machine wired to the DiscordPort, through Discord's thread and message rate limits. */
export function provideCollaborate(deps: SideEffectDeps) {
  const { now } = deps;
  const discord = () => required(deps.discord, "discord");
  const post = (kind: "starter" | "mention" | "system") =>
    fromPromise<PostMessageOutput, PostMessageInput>(({ input: stored }) => {
      // Written here, as it is posted: in the language configured now.
      const { text, ...rest } = stored;
      const input = { ...rest, content: renderCollaborationText(text, deps.messages) };
      const send = sendOnce(deps, input);
      return stamped(now, async () => {
        // Before the post: Discord may deliver it back before the request returns.
        if (kind === "mention") deps.onMentionPosting?.(input.channelId);
        const posted = kind === "system" ? deps.onSystemPosting?.(input) : undefined;
        try {
          const { messageId } = await send();
          if (kind === "system") deps.onSystemMessage?.(messageId);
          return { messageId, at: now() };
        } finally {
          posted?.();
        }
      });
    });
  return collaborateMachine.provide({
    actors: {
      createThread: fromPromise<CreateThreadOutput, CreateThreadInput>(({ input }) =>
        stamped(now, async () => {
          const bucket = await deps.threadCreationBucket(input.channelId);
          const { text, ...thread } = input;
          // Named here, as it is opened: in the language configured now.
          const name = renderCollaborationText(text, deps.messages);
          const { threadId } = await throughDiscordBucket(deps.limiters.threadCreation, bucket, () =>
            createThreadOnce(discord(), { ...thread, name }),
          );
          deps.onThreadCreated?.({ threadId, channelId: input.channelId });
          return { threadId, at: now() };
        }),
      ),
      postStarter: post("starter"),
      postMention: post("mention"),
      postNotice: post("system"),
      mention: mentionMachine.provide({
        actors: { postReminder: post("system"), postEscalation: post("system") },
      }),
    },
  });
}
