/**
 * Discord for the example: the package's bundled emulator (Discord's REST API and gateway on
 * 127.0.0.1) with one guild channel, a bot user per agent and one human, and a discord.js client per
 * agent bot. Against real Discord you create the same clients and log in with the bots' tokens instead.
 */
import { Client, Events, GatewayIntentBits } from "discord.js";
import { type DiscordEmulator, emulatorToken, startDiscordEmulator } from "a2a-statecharts/testing";

export const AGENT_IDS = ["ruda", "eden", "seum"] as const;
export type AgentId = (typeof AGENT_IDS)[number];

/** Discord ids are snowflakes; these are made up for the emulator. */
export const IDS = {
  guild: "1500000000000000001",
  channel: "1500000000000000010",
  human: "1500000000000000900",
  bots: { ruda: "1500000000000000101", eden: "1500000000000000102", seum: "1500000000000000103" },
} as const satisfies { bots: Record<AgentId, string> } & Record<string, unknown>;

export interface EmulatedDiscord {
  emulator: DiscordEmulator;
  /** One logged-in client per agent bot, by agent id. */
  clients: Record<string, Client<true>>;
}

export async function startEmulatedDiscord(): Promise<EmulatedDiscord> {
  const emulator = await startDiscordEmulator({
    guildId: IDS.guild,
    channels: [{ id: IDS.channel, name: "collab" }],
    users: [
      ...AGENT_IDS.map((id) => ({ id: IDS.bots[id], name: id, bot: true })),
      { id: IDS.human, name: "human", bot: false },
    ],
  });
  const clients: Record<string, Client<true>> = {};
  try {
    for (const id of AGENT_IDS) clients[id] = await login(emulator.apiUrl, emulatorToken(IDS.bots[id]));
  } catch (error) {
    await Promise.all(Object.values(clients).map((client) => client.destroy()));
    await emulator.close();
    throw error;
  }
  return { emulator, clients };
}

async function login(apiUrl: string, token: string): Promise<Client<true>> {
  const client = new Client({
    // The bots read every message in the channels and threads they are in.
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent],
    // Strict: every 429 and 5xx reaches the runtime, whose state machines own the retries.
    rest: { api: apiUrl, retries: 0, rejectOnRateLimit: ["/channels"] },
  });
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(token);
  await ready;
  return client as Client<true>;
}
