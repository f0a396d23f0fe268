// A gateway's first run, as a consumer writes it: the emulator (Discord on 127.0.0.1), two discord.js
// bots, the runtime on a temp state dir with the Discord adapter, the bridge and the inspector. Agent
// alpha asks beta with `discord_send`; beta's bot answers in the thread; the mention must end
// `responded`. Then the mention machine alone, with the consumer's own xstate. The same file is
// compiled once as an ES module and once as CommonJS (no top-level await, so both can run it), and
// the process must exit by itself once everything is stopped.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, Events, GatewayIntentBits } from "discord.js";
import { createActor, fromPromise } from "xstate";
import {
  type A2AConfigInput,
  type A2ARuntime,
  createA2ARuntime,
  mentionMachine,
  type PostMessageInput,
  type PostMessageOutput,
} from "a2a-statecharts";
import { bridgeDiscordJs, createDiscordJsPort, handleDiscordSend } from "a2a-statecharts/discord";
import { type InspectorHello, startInspectorServer } from "a2a-statecharts/inspector";
import { emulatorToken, startDiscordEmulator } from "a2a-statecharts/testing";

const IDS = {
  guild: "1500000000000000001",
  channel: "1500000000000000010",
  alpha: "1500000000000000101",
  beta: "1500000000000000102",
};

const config: A2AConfigInput = {
  agents: { alpha: { discordBotId: IDS.alpha }, beta: { discordBotId: IDS.beta } },
  discord: { collaboration: { defaultChannel: IDS.channel, allowedChannels: [IDS.channel] } },
};

async function login(apiUrl: string, token: string): Promise<Client<true>> {
  const client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent],
    rest: { api: apiUrl, retries: 0 },
  });
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(token);
  await ready;
  return client as Client<true>;
}

/** Polls real I/O (sockets to the emulator) until `check` gives a value. */
async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function mentionAnswered(): Promise<string> {
  const stateDir = await mkdtemp(join(tmpdir(), "a2a-consumer-smoke-"));
  const emulator = await startDiscordEmulator({
    guildId: IDS.guild,
    channels: [{ id: IDS.channel, name: "collab" }],
    users: [
      { id: IDS.alpha, name: "alpha", bot: true },
      { id: IDS.beta, name: "beta", bot: true },
    ],
  });
  const inspector = await startInspectorServer();
  const clients: Record<string, Client<true>> = {};
  const failures: string[] = [];
  let runtime: A2ARuntime | undefined;
  let detach: (() => void) | undefined;
  try {
    clients.alpha = await login(emulator.apiUrl, emulatorToken(IDS.alpha));
    clients.beta = await login(emulator.apiUrl, emulatorToken(IDS.beta));
    runtime = createA2ARuntime({
      stateDir,
      config,
      discord: createDiscordJsPort(clients),
      inspect: inspector.inspect,
    });
    await runtime.start();
    let answered = false;
    detach = bridgeDiscordJs(runtime, clients, {
      // Beta answers the mention once, in the thread it came from; nothing else is answered.
      onHandle: async ({ agentId, message }) => {
        if (agentId !== "beta" || answered) return;
        answered = true;
        const channel = await clients.beta?.channels.fetch(message.channelId);
        // `"send" in` rather than isSendable(), which older discord.js 14 releases lack.
        if (channel === null || channel === undefined || !("send" in channel))
          throw new Error(`beta cannot post in ${message.channelId}`);
        await channel.send({ content: "The staging logs are clean.", allowedMentions: { users: [] } });
      },
      onError: (error) => failures.push(error instanceof Error ? error.message : String(error)),
    });

    const sent = await handleDiscordSend(runtime, "alpha", {
      targetAgentId: "beta",
      message: "Can you check the staging logs?",
    });
    if (!sent.ok) throw new Error(`discord_send failed: ${sent.text}`);
    const live = runtime;
    const mention = await until("the mention to be answered", async () =>
      (await live.mentions()).find((m) => m.id === sent.mentionId && m.status !== "pending"),
    );
    if (mention.status !== "responded") throw new Error(`the mention ended ${mention.status}`);

    // The inspector serves the Mermaid bundle the package ships (no CDN, no mermaid package installed).
    const bundle = await fetch(new URL("/mermaid.js", inspector.url));
    const script = await bundle.text();
    if (bundle.status !== 200 || !script.includes("mermaid") || script.length < 1_000_000)
      throw new Error(`/mermaid.js: status ${bundle.status}, ${script.length} characters, not Mermaid`);
    const hello = (await (await fetch(new URL("/state.json", inspector.url))).json()) as InspectorHello;
    if (hello.actors.length === 0) throw new Error("the inspector saw no actor of the runtime");

    if (failures.length > 0) throw new Error(`the bridge failed: ${failures.join("; ")}`);
    return (
      `mention ${mention.status} in thread ${sent.threadId}; ` +
      `inspector served Mermaid (${Math.round(script.length / 1024)} KiB) and ${hello.actors.length} actors`
    );
  } finally {
    detach?.();
    await runtime?.stop();
    await Promise.all(Object.values(clients).map((client) => client.destroy()));
    await emulator.close();
    await inspector.close();
    await rm(stateDir, { recursive: true, force: true });
  }
}

/** The mention machine with the consumer's own `fromPromise`, run to its end by the consumer's `createActor`. */
function machineAlone(): string {
  const post = fromPromise<PostMessageOutput, PostMessageInput>(async ({ input }) => ({
    messageId: input.nonceKey,
    at: Date.now(),
  }));
  const machine = mentionMachine.provide({ actors: { postReminder: post, postEscalation: post } });
  const actor = createActor(machine, {
    input: {
      mentionId: "m1",
      threadId: "1500000000000000500",
      fromAgentId: "alpha",
      targetAgentId: "beta",
      targetBotId: IDS.beta,
      originalText: "hello",
      responseTimeoutMs: 60_000,
      urgentResponseTimeoutMs: 30_000,
      maxAttempts: 3,
      sentAt: Date.now(),
    },
  });
  actor.start();
  actor.send({ type: "RESPONSE_RECEIVED", authorId: IDS.beta, at: Date.now() });
  const snapshot = actor.getSnapshot();
  actor.stop();
  if (snapshot.status !== "done" || snapshot.output?.status !== "responded")
    throw new Error(
      `mentionMachine: ${snapshot.status}, ${JSON.stringify(snapshot.output)} instead of responded`,
    );
  return `mentionMachine alone: ${snapshot.output.status} after ${snapshot.output.attempts} attempt`;
}

mentionAnswered()
  .then((line) => {
    console.log(line);
    console.log(machineAlone());
  })
  .catch((error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exitCode = 1;
  });
