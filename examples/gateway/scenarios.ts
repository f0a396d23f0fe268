/**
 * What the example gateway is made to do, each with the outcome it must have: a human's mention
 * answered, a sessions_send conversation, a discord_send answered in its thread, and two chatty agents
 * whose conversation the runtime ends. Each returns one summary line; main.ts exits non-zero if any
 * outcome is not the expected one.
 */
import type { A2AEvent, A2ARuntime, InboundDiscordMessage, PreflightResult } from "a2a-statecharts";
import type { DiscordEmulator } from "a2a-statecharts/testing";
import { IDS } from "./emulatedDiscord.js";

export interface ExampleGateway {
  runtime: A2ARuntime;
  emulator: DiscordEmulator;
  maxPingPongTurns: number;
  /** Every decision the bridge saw, in order. */
  decisions: Array<{ decision: PreflightResult; message: InboundDiscordMessage }>;
  events: A2AEvent[];
  /** Resolves once no agent reply is being written and the runtime is idle. */
  settled(): Promise<void>;
}

export interface Outcome {
  ok: boolean;
  line: string;
}

export interface Scenario {
  title: string;
  run(gateway: ExampleGateway): Promise<Outcome>;
}

/** The data of an `a2a.exchange.ended` event: the runtime ended a bot↔bot exchange in a thread. */
function exchangeEnded(event: A2AEvent) {
  return event.type === "a2a.exchange.ended" ? event.data : undefined;
}

/** Polls `check` (real I/O: sockets to the emulator) until it gives a value, for at most `timeoutMs`. */
async function eventually<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 5_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** discord_send: the mention is posted in a new thread of the default channel. */
async function discordSend(runtime: A2ARuntime, p: Parameters<A2ARuntime["discordSend"]>[0]) {
  const sent = await runtime.discordSend(p);
  if (sent.status !== "sent")
    throw new Error(`discord_send rejected: ${sent.error.code} ${sent.error.message}`);
  return sent;
}

export const SCENARIOS: Scenario[] = [
  {
    title: "a human mentions ruda in the channel; ruda's bot answers there",
    async run({ emulator }) {
      const asked = await emulator.postAsUser({
        userId: IDS.human,
        channelId: IDS.channel,
        content: `<@${IDS.bots.ruda}> how is the release going?`,
      });
      const answer = await eventually("ruda's answer in the channel", () => {
        const messages = emulator.messages(IDS.channel);
        const later = messages.slice(messages.findIndex((m) => m.id === asked.messageId) + 1);
        return later.find((m) => m.authorId === IDS.bots.ruda);
      });
      return { ok: true, line: `ruda answered: "${answer.content}"` };
    },
  },
  {
    title: "sessions_send from ruda to eden, with ping-pong",
    async run({ runtime }) {
      const result = await runtime.sessionsSend({
        requesterSessionKey: "agent:ruda:main",
        targetSessionKey: "agent:eden:main",
        message: "Please review the login flow design.",
        timeoutSeconds: 60, // > 0: resolves with the conversation's end
      });
      const line =
        `status ${result.status}, ${result.actualTurns} ping-pong turns, ` +
        `ended by ${result.terminationReason ?? "nothing"}`;
      return { ok: result.status === "ok" && result.terminationReason === "conclusion_detected", line };
    },
  },
  {
    title: "discord_send from ruda to seum, answered in the thread",
    async run({ runtime }) {
      const sent = await discordSend(runtime, {
        fromAgentId: "ruda",
        targetAgentId: "seum",
        message: "Can you check the staging logs for errors?",
      });
      const mention = await eventually("the mention to end", async () =>
        (await runtime.mentions()).find((m) => m.id === sent.mentionId && m.status !== "pending"),
      );
      return {
        ok: mention.status === "responded",
        line: `mention ${mention.status} in thread ${sent.threadId}`,
      };
    },
  },
  {
    title: "eden and ruda would argue forever in a thread; the runtime ends the exchange",
    async run({ runtime, events, decisions, maxPingPongTurns, settled }) {
      const sent = await discordSend(runtime, {
        fromAgentId: "eden",
        targetAgentId: "ruda",
        message: "Tabs or spaces? Convince me, I will argue back.",
      });
      const ended = await eventually("a2a.exchange.ended", () =>
        events.map(exchangeEnded).find((e) => e?.threadId === sent.threadId),
      ).catch(() => undefined);
      await settled();
      if (ended === undefined) {
        const inThread = decisions.filter(({ message }) => message.threadId === sent.threadId);
        const seen = inThread.map(({ decision }) =>
          decision.action === "drop" ? decision.reason : decision.action,
        );
        return { ok: false, line: `no a2a.exchange.ended event; the thread's decisions: ${seen.join(", ")}` };
      }
      const loopGuardDrops = decisions.filter(
        ({ decision }) => decision.action === "drop" && decision.reason === "loop_guard",
      ).length;
      return {
        // The event's reason is a turn limit or a termination guard by type; the loop guard must never have dropped one.
        ok: ended.handled <= 1 + maxPingPongTurns && loopGuardDrops === 0,
        line:
          `exchange ended by ${ended.reason} after ${ended.handled} handled messages ` +
          `(at most ${1 + maxPingPongTurns}), ${loopGuardDrops} loop-guard drops`,
      };
    },
  },
];
