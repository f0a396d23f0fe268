import { type Client, Routes } from "discord.js";
import type { BridgeDiscordJsOptions, HandleDecision } from "../../discord/index.js";
import type { PreflightResult } from "../../runtime/index.js";
import type { InboundDiscordMessage } from "../../policies/index.js";
import type { RuntimeTimers } from "../../durable/timers.js";
import type { DemoAgentId } from "./cast.js";

/** Resolves after `ms` of demo time (at once when `ms` is not above 0). */
export function sleep(timers: RuntimeTimers, ms: number): Promise<void> {
  return new Promise((resolve) => timers.setTimeout(resolve, ms));
}

/** One scripted answer: when `agentId` is asked to handle a message that `matches`, it replies. */
export interface BotRule {
  agentId: DemoAgentId;
  matches(m: InboundDiscordMessage, handle: HandleDecision): boolean;
  reply: string;
  /** Demo time the agent "thinks" before answering. */
  afterMs: number;
}

/**
 * The agents, scripted instead of LLM-driven: on `onHandle` (where a gateway starts the agent's run) a
 * matching rule makes the agent's bot answer in the thread. Every decision is recorded.
 */
export class ScriptedBots {
  private readonly rules: BotRule[] = [];
  readonly decisions: Array<{ message: InboundDiscordMessage; decision: PreflightResult }> = [];
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly clients: Record<DemoAgentId, Client<true>>,
    private readonly timers: RuntimeTimers,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Adds a one-shot rule. */
  when(rule: BotRule): void {
    this.rules.push(rule);
  }

  /** What `bridgeDiscordJs` needs to bring the scripted agents every decision and handle. */
  readonly bridgeOptions: Pick<BridgeDiscordJsOptions, "onHandle" | "onDecision"> = {
    onDecision: (decision, message) => this.decisions.push({ message, decision }),
    onHandle: (handle) => this.answer(handle),
  };

  /** Waits for the replies being written. */
  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  private answer(handle: HandleDecision): void {
    const m = handle.message;
    const index = this.rules.findIndex((r) => r.agentId === handle.agentId && r.matches(m, handle));
    const rule = index < 0 ? undefined : this.rules.splice(index, 1)[0];
    if (rule === undefined) return;
    const client = this.clients[rule.agentId];
    const work = sleep(this.timers, rule.afterMs)
      .then(() => client.rest.post(Routes.channelMessages(m.channelId), { body: { content: rule.reply } }))
      .then(
        () => undefined,
        (error: unknown) => this.onError(error),
      )
      .finally(() => this.pending.delete(work));
    this.pending.add(work);
  }
}
