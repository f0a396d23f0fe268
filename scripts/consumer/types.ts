// Type-level use of the package as a gateway writes it, checked with `tsc --strict` against the
// consumer's own xstate and discord.js (not the copies the package was built with). Each line is
// something that broke for users when the package brought its own copies: the consumer's discord.js
// `Client` given to `createDiscordJsPort`, the consumer's `fromPromise` in `mentionMachine.provide`,
// `createActor` of the provided machine. Compiled, never run.
import { Client, GatewayIntentBits } from "discord.js";
import { type ActorRefFrom, createActor, fromPromise, type SnapshotFrom } from "xstate";
import {
  type A2AConfigInput,
  type A2AEvent,
  type A2ARuntime,
  createA2ARuntime,
  type DiscordPort,
  type MentionInput,
  mentionMachine,
  type MentionOutput,
  parseConfig,
  type PostMessageInput,
  type PostMessageOutput,
} from "a2a-statecharts";
import {
  bridgeDiscordJs,
  createDiscordJsPort,
  type DiscordSendToolResult,
  discordSendTool,
  handleDiscordSend,
  type HandleDecision,
} from "a2a-statecharts/discord";
import { type DiscordEmulator, emulatorToken, startDiscordEmulator } from "a2a-statecharts/testing";
import { type InspectorServer, startInspectorServer } from "a2a-statecharts/inspector";
import { createPostgresStore, PostgresStoreError } from "a2a-statecharts/postgres";
import { createDurableHost, createMemoryStore } from "a2a-statecharts/durable";

const client: Client = new Client({ intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages] });
const clients: Record<string, Client> = { alpha: client };
const port: DiscordPort = createDiscordJsPort(clients);

const config: A2AConfigInput = {
  agents: { alpha: { discordBotId: "1500000000000000101" } },
  discord: { collaboration: { defaultChannel: "1500000000000000010" } },
};
const runtime: A2ARuntime = createA2ARuntime({ stateDir: "state", config, discord: port });
const detach: () => void = bridgeDiscordJs(runtime, clients, {
  onHandle: (handle: HandleDecision) => handle.sessionKey,
});
detach();
const stopListening: () => void = runtime.onEvent((event: A2AEvent) => event.type);
stopListening();
const parsed: unknown = parseConfig(config);

const post = fromPromise<PostMessageOutput, PostMessageInput>(async ({ input }) => ({
  messageId: input.nonceKey,
  at: Date.now(),
}));
const provided = mentionMachine.provide({ actors: { postReminder: post, postEscalation: post } });
const input: MentionInput = {
  mentionId: "m1",
  threadId: "1500000000000000500",
  fromAgentId: "alpha",
  targetAgentId: "beta",
  targetBotId: "1500000000000000102",
  originalText: "hello",
  responseTimeoutMs: 60_000,
  urgentResponseTimeoutMs: 30_000,
  maxAttempts: 3,
  sentAt: Date.now(),
};
const actor: ActorRefFrom<typeof provided> = createActor(provided, { input });
const snapshot: SnapshotFrom<typeof provided> = actor.getSnapshot();
const output: MentionOutput | undefined = snapshot.output;

async function tool(): Promise<string> {
  const result: DiscordSendToolResult = await handleDiscordSend(runtime, "alpha", { targetAgentId: "beta" });
  return result.ok ? result.threadId : result.code;
}
const toolName: string = discordSendTool.name;

async function servers(): Promise<void> {
  const emulator: DiscordEmulator = await startDiscordEmulator({ channels: [], users: [] });
  const token: string = emulatorToken("1500000000000000101");
  const inspector: InspectorServer = await startInspectorServer();
  const host = createDurableHost({
    store: createMemoryStore(),
    machines: { mention: { machine: provided, version: 1 } },
    inspect: inspector.inspect,
  });
  await Promise.all([emulator.close(), inspector.close(), token, host]);
}

// Several gateway processes on one PostgreSQL: the store goes where the lowdb one would.
const shared = createA2ARuntime({
  stateDir: "state-2",
  config,
  discord: port,
  store: createPostgresStore({
    connectionString: "postgresql://a2a@db/gateway",
    schema: "a2a",
    leaseMs: 10_000,
  }),
});
const badConfig: boolean = new Error() instanceof PostgresStoreError;

export { badConfig, output, parsed, servers, shared, tool, toolName };
