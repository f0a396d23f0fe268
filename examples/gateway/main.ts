/**
 * A small gateway embedding a2a-statecharts, top to bottom: three agent bots on Discord (the bundled
 * emulator), the runtime, the bridge that routes Discord messages to agent runs, the agents' replies
 * posted by their own bots, the two agent-to-agent tools, and a SIGTERM shutdown that lets the process
 * exit. It runs the scenarios of scenarios.ts, prints one line each, and exits 1 if any went wrong.
 *
 *   npx tsx examples/gateway/main.ts
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type A2AConfigInput, type A2AEvent, createA2ARuntime } from "a2a-statecharts";
import { bridgeDiscordJs, createDiscordJsPort, type HandleDecision } from "a2a-statecharts/discord";
import { AGENT_IDS, IDS, startEmulatedDiscord } from "./emulatedDiscord.js";
import { type ExampleGateway, type Outcome, SCENARIOS } from "./scenarios.js";
import { ScriptedLlm } from "./scriptedLlm.js";

const MAX_PING_PONG_TURNS = 3;

const config: A2AConfigInput = {
  // Each agent and the user id of its Discord bot.
  agents: Object.fromEntries(AGENT_IDS.map((id) => [id, { discordBotId: IDS.bots[id] }])),
  discord: { collaboration: { defaultChannel: IDS.channel, allowedChannels: [IDS.channel] } },
  // Follow-up turns after the first answer, in sessions_send and in a thread between bots.
  session: { agentToAgent: { maxPingPongTurns: MAX_PING_PONG_TURNS } },
};

const failures: string[] = [];
const stateDir = await mkdtemp(join(tmpdir(), "a2a-gateway-example-"));
const { emulator, clients } = await startEmulatedDiscord();
const llm = new ScriptedLlm();

const runtime = createA2ARuntime({
  stateDir, // where the control plane keeps its state; a restart resumes from it
  config,
  gateway: llm.gatewayPort(), // how the runtime runs an agent (sessions_send and its ping-pong)
  discord: createDiscordJsPort(clients), // how it posts as an agent's bot (discord_send, reminders)
});
await runtime.start();
const events: A2AEvent[] = [];
runtime.onEvent((event) => events.push(event));

// An agent's run for a message it must answer: the model's reply, posted by the agent's own bot in the
// channel or thread the message came from. The bridge then sees that reply like any other message.
async function answer({ agentId, sessionKey, message }: HandleDecision): Promise<void> {
  const reply = llm.reply(sessionKey, message.content, message.authorId);
  const client = clients[agentId];
  if (client === undefined) throw new Error(`no Discord bot for agent ${agentId}`);
  const channel = await client.channels.fetch(message.channelId);
  if (channel === null || !channel.isSendable())
    throw new Error(`${agentId} cannot post in ${message.channelId}`);
  const mentioned = [...reply.matchAll(/<@(\d+)>/g)].map((match) => match[1] as string);
  await channel.send({ content: reply, allowedMentions: { users: mentioned } });
}

const replying = new Set<Promise<void>>();
const decisions: ExampleGateway["decisions"] = [];
const detach = bridgeDiscordJs(runtime, clients, {
  // Called once per message an agent must answer: start its run in that session.
  onHandle: (handle) => {
    const run = answer(handle).finally(() => replying.delete(run));
    replying.add(run);
    return run;
  },
  // Every decision (handle, observe, or drop with a reason), for logs; here, for the checks.
  onDecision: (decision, message) => decisions.push({ decision, message }),
  onError: (error, message) => {
    failures.push(`message ${message.messageId}: ${error instanceof Error ? error.message : String(error)}`);
  },
});

// Shutdown that ends: stop feeding messages in, stop the runtime (it refuses new work, lets its writes
// land and releases the state dir), close the sockets; then nothing keeps the process alive.
process.once("SIGTERM", async () => {
  detach();
  await runtime.stop();
  await Promise.all(Object.values(clients).map((client) => client.destroy()));
  await emulator.close(); // the example's own Discord; a real gateway has none
  await rm(stateDir, { recursive: true, force: true }); // the example keeps nothing
  console.log(`stopped; exit code ${process.exitCode ?? 0}`);
});

const gateway: ExampleGateway = {
  runtime,
  emulator,
  maxPingPongTurns: MAX_PING_PONG_TURNS,
  decisions,
  events,
  async settled() {
    // Until no reply is being written and the bridge has decided on every message Discord has.
    const deadline = Date.now() + 5_000;
    for (;;) {
      await Promise.allSettled([...replying]);
      const decided = new Set(decisions.map(({ message }) => message.messageId));
      const undecided = emulator.messages().filter((m) => !decided.has(m.id));
      if (replying.size === 0 && undecided.length === 0) return;
      if (Date.now() > deadline) throw new Error(`${undecided.length} messages still undecided after 5 s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  },
};

for (const scenario of SCENARIOS) {
  let outcome: Outcome;
  try {
    outcome = await scenario.run(gateway);
  } catch (error) {
    outcome = { ok: false, line: error instanceof Error ? error.message : String(error) };
  }
  console.log(`${outcome.ok ? "ok  " : "FAIL"} ${scenario.title}\n     ${outcome.line}`);
  if (!outcome.ok) failures.push(scenario.title);
}
await gateway.settled().catch((error: Error) => failures.push(error.message));
for (const failure of failures) console.error(`failed: ${failure}`);
console.log(`${SCENARIOS.length} scenarios, ${failures.length} failures`);
process.exitCode = failures.length === 0 ? 0 : 1;

// As a process manager would end it. If anything were still running 10 s later, that is a failure too.
setTimeout(() => {
  console.error("still running 10 s after SIGTERM");
  process.exit(1);
}, 10_000).unref();
process.kill(process.pid, "SIGTERM");
