/**
 * Child of shutdown.test.ts: a small gateway (two discord.js bots against the parent's emulator, the
 * runtime, the bridge) with the README's SIGTERM handler, as a user would copy it. It prints `ready`,
 * then waits; on SIGTERM it must leave nothing running, so the process ends by itself with code 0.
 */
import { Client, Events, GatewayIntentBits } from "discord.js";
import { bridgeDiscordJs, createDiscordJsPort } from "../../src/discord/index.js";
import { emulatorToken } from "../../src/testing/index.js";
import { createA2ARuntime } from "../../src/index.js";

const [apiUrl, stateDir, channel, rudaId, edenId] = process.argv.slice(2);
if (
  apiUrl === undefined ||
  stateDir === undefined ||
  channel === undefined ||
  rudaId === undefined ||
  edenId === undefined
)
  throw new Error("usage: shutdownChild.ts <apiUrl> <stateDir> <channel> <rudaId> <edenId>");

async function login(userId: string): Promise<Client> {
  const client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent],
    rest: { api: apiUrl, retries: 0, rejectOnRateLimit: ["/channels"] },
  });
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(emulatorToken(userId));
  await ready;
  return client;
}

const discordClients = { ruda: await login(rudaId), eden: await login(edenId) };
const runtime = createA2ARuntime({
  stateDir,
  config: {
    agents: { ruda: { discordBotId: rudaId }, eden: { discordBotId: edenId } },
    discord: { collaboration: { defaultChannel: channel, allowedChannels: [channel] } },
  },
  discord: createDiscordJsPort(discordClients),
});
await runtime.start();
const detach = bridgeDiscordJs(runtime, discordClients);

// The README's shutdown, as written there.
process.once("SIGTERM", async () => {
  detach(); // no new message reaches the runtime
  await runtime.stop(); // refuses new work, lets its writes land, releases the state dir
  await Promise.all(Object.values(discordClients).map((client) => client.destroy())); // closes the sockets
  // Nothing keeps the event loop alive now: the process exits with code 0.
});
process.stdout.write("ready\n");
