import type { z } from "zod";
import { cutText } from "../InvalidInputError.js";
import { DISCORD_ID_PATTERN } from "../collaboration/discordIds.js";

/** The parts of a parsed config whose settings must agree with each other. */
interface ConsistencyInput {
  discord: { collaboration: { defaultChannel?: string | undefined; allowedChannels: string[] } };
  agents: Record<string, { discordBotId: string }>;
}

/** Settings that parse but cannot work together: refused at load, at the path of the one to change. */
export function checkConfigConsistency(config: ConsistencyInput, ctx: z.RefinementCtx): void {
  // zod runs this even when a value is malformed; such a value has its own problem reported already.
  const valid = (id: string | undefined): id is string => id !== undefined && DISCORD_ID_PATTERN.test(id);
  const { defaultChannel, allowedChannels } = config.discord.collaboration;
  if (valid(defaultChannel) && !allowedChannels.includes(defaultChannel)) {
    ctx.addIssue({
      code: "custom",
      path: ["discord", "collaboration", "defaultChannel"],
      message:
        `is ${JSON.stringify(defaultChannel)}, which is not in discord.collaboration.allowedChannels, so ` +
        "every collaboration sent there would be refused (channel_not_allowed): add it to allowedChannels",
    });
  }
  const agentOfBot = new Map<string, string>();
  for (const [agentId, agent] of Object.entries(config.agents)) {
    if (!valid(agent.discordBotId)) continue;
    const first = agentOfBot.get(agent.discordBotId);
    if (first === undefined) {
      agentOfBot.set(agent.discordBotId, agentId);
      continue;
    }
    ctx.addIssue({
      code: "custom",
      path: ["agents", agentId, "discordBotId"],
      message:
        `is also agents.${cutText(first, 40)}.discordBotId: a bot's messages and mentions must name one agent, ` +
        "so each agent needs its own bot",
    });
  }
}
