import { type Client, Routes } from "discord.js";
import type { A2ARuntime, PreflightResult } from "../../runtime/index.js";
import type { InboundDiscordMessage } from "../../services/index.js";
import type { AcceleratedClock } from "./AcceleratedClock.js";
import type { DemoAgentId } from "./cast.js";

/** One scripted answer: when `agentId` is asked to handle a message that `matches`, it replies. */
export interface BotRule {
  agentId: DemoAgentId;
  matches(m: InboundDiscordMessage, decision: PreflightResult & { action: "handle" }): boolean;
  reply: string;
  /** Demo time the agent "thinks" before answering. */
  afterMs: number;
}

/**
 * The agents on the Discord side, scripted instead of LLM-driven: the gateway hands them the
 * messages preflight decides they handle (API.md §7 handleDiscordMessage), and a matching rule makes
 * the agent's own bot answer in the same thread, as an LLM reply would be delivered.
 */
export class ScriptedBots {
  private readonly rules: BotRule[] = [];
  readonly decisions: Array<{ message: InboundDiscordMessage; decision: PreflightResult }> = [];
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly clients: Record<DemoAgentId, Client<true>>,
    private readonly clock: AcceleratedClock,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Adds a one-shot rule. */
  when(rule: BotRule): void {
    this.rules.push(rule);
  }

  /** The runtime as the Discord bridge should see it: every decision also reaches the scripted agents. */
  wrap(runtime: A2ARuntime): Pick<A2ARuntime, "handleDiscordMessage"> {
    return {
      handleDiscordMessage: async (m) => {
        const decision = await runtime.handleDiscordMessage(m);
        this.decisions.push({ message: m, decision });
        if (decision.action === "handle") this.answer(m, decision);
        return decision;
      },
    };
  }

  /** Waits for the replies being written. */
  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  private answer(m: InboundDiscordMessage, decision: PreflightResult & { action: "handle" }): void {
    const index = this.rules.findIndex((r) => r.agentId === decision.agentId && r.matches(m, decision));
    const rule = index < 0 ? undefined : this.rules.splice(index, 1)[0];
    if (rule === undefined) return;
    const client = this.clients[rule.agentId];
    const work = this.clock
      .sleep(rule.afterMs)
      .then(() => client.rest.post(Routes.channelMessages(m.channelId), { body: { content: rule.reply } }))
      .then(
        () => undefined,
        (error: unknown) => this.onError(error),
      )
      .finally(() => this.pending.delete(work));
    this.pending.add(work);
  }
}
