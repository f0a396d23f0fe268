import { Client, Events, GatewayIntentBits } from "discord.js";
import { afterEach, beforeEach } from "vitest";
import {
  type DiscordEmulator,
  type DiscordEmulatorOptions,
  emulatorToken,
  startDiscordEmulator,
} from "../../src/testing/index.js";
import type { A2ARuntime } from "../../src/index.js";

/**
 * A strict discord.js client logged in to the emulator as `userId`: every 5xx and 429 on /channels
 * surfaces to the caller, as the runtime's machines expect. `track` collects it for clean-up.
 */
export async function loginStrictClient(
  emulator: DiscordEmulator,
  userId: string,
  track: Client[],
): Promise<Client<true>> {
  const client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent],
    rest: { api: emulator.apiUrl, retries: 0, rejectOnRateLimit: ["/channels"] },
  });
  track.push(client);
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(emulatorToken(userId));
  await ready;
  return client as Client<true>;
}

/** Polls over real I/O (sockets to the emulator), bounded. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 5_000,
): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** An emulator with one guild, one channel and two agent bots plus a human, as most discord tests need. */
export function startTwoBotEmulator(
  ids: { guild: string; channel: string; ruda: string; eden: string; human: string },
  options: Partial<DiscordEmulatorOptions> = {},
): Promise<DiscordEmulator> {
  return startDiscordEmulator({
    ...options,
    guildId: ids.guild,
    channels: [{ id: ids.channel, name: "collab" }],
    users: [
      { id: ids.ruda, name: "ruda", bot: true },
      { id: ids.eden, name: "eden", bot: true },
      { id: ids.human, name: "human", bot: false },
    ],
  });
}

/**
 * A fresh two-bot emulator for each test, and what the test starts on it (`clients`, `runtime`,
 * `detach`), torn down after it in the order a gateway shuts down: bridge, runtime, clients, emulator.
 */
export function useTwoBotEmulator(ids: Parameters<typeof startTwoBotEmulator>[0]) {
  const fixture: {
    emulator: DiscordEmulator;
    clients: Client[];
    runtime?: A2ARuntime;
    detach?: () => void;
  } = { emulator: undefined as unknown as DiscordEmulator, clients: [] };
  beforeEach(async () => {
    fixture.emulator = await startTwoBotEmulator(ids);
  });
  afterEach(async () => {
    fixture.detach?.();
    await fixture.runtime?.stop();
    await Promise.all(fixture.clients.splice(0).map((c) => c.destroy()));
    await fixture.emulator.close();
    delete fixture.runtime;
    delete fixture.detach;
  });
  return fixture;
}
