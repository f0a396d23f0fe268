// Threads opened with and without a starter message, and members added by the target's bot, make
// Discord post system messages; none of them reaches a decision, an observer record or the loop guard,
// and none ends a mention. Real discord.js clients, the emulator, bridgeDiscordJs and the runtime.
import { ChannelType, type Client, Events, type Message, type ThreadChannel } from "discord.js";
import { expect, it } from "vitest";
import { bridgeDiscordJs, createDiscordJsPort, toInboundDiscordMessage } from "../../src/discord/index.js";
import {
  type A2ARuntime,
  createA2ARuntime,
  type InboundDiscordMessage,
  type PreflightResult,
} from "../../src/index.js";
import { loginStrictClient, until, useTwoBotEmulator } from "../support/discordClients.js";
import { tempDir } from "../support/tempDir.js";
import { savedThreadEntries } from "../support/threadStateFiles.js";
import { textLogger } from "../../src/runtime/logger.js";

const CHANNEL = "1720000000000000010";
const RUDA = "1720000000000000101";
const EDEN = "1720000000000000102";
const HUMAN = "1720000000000000900";

const fx = useTwoBotEmulator({
  guild: "1720000000000000001",
  channel: CHANNEL,
  ruda: RUDA,
  eden: EDEN,
  human: HUMAN,
});

function threadOf(client: Client, id: string): ThreadChannel {
  const channel = client.channels.cache.get(id);
  if (!channel?.isThread()) throw new Error(`${id} is not a thread ${client.user?.id ?? ""} knows`);
  return channel;
}

async function mentionStatus(runtime: A2ARuntime, id: string) {
  return (await runtime.mentions()).find((m) => m.id === id)?.status;
}

it("threads opened with and without a starter, and members added: no system message is decided, observed, counted or taken for an answer", async () => {
  const [ruda, eden] = await Promise.all([
    loginStrictClient(fx.emulator, RUDA, fx.clients),
    loginStrictClient(fx.emulator, EDEN, fx.clients),
  ]);
  const stateDir = tempDir("a2a-sysmsg-");
  const runtime = createA2ARuntime({
    stateDir,
    config: {
      agents: { ruda: { discordBotId: RUDA }, eden: { discordBotId: EDEN } },
      // The mention, eden's answer and ruda's reply fit; one more bot message in the thread would not.
      discord: {
        collaboration: {
          defaultChannel: CHANNEL,
          allowedChannels: [CHANNEL],
          loopGuard: { maxMessagesPerThread: 3 },
        },
      },
    },
    discord: createDiscordJsPort({ ruda, eden }),
    logger: textLogger(() => {}),
  });
  fx.runtime = runtime;
  await runtime.start();
  const decided: Array<{ decision: PreflightResult; message: InboundDiscordMessage }> = [];
  const reached: string[] = [];
  const recording: Pick<A2ARuntime, "handleDiscordMessage"> = {
    handleDiscordMessage: (message) => {
      reached.push(message.messageId);
      return runtime.handleDiscordMessage(message);
    },
  };
  fx.detach = bridgeDiscordJs(
    recording,
    { ruda, eden },
    {
      onDecision: (decision, message) => decided.push({ decision, message }),
      onError: (error) => {
        throw error;
      },
    },
  );
  const systemSeenByRuda: Message[] = [];
  ruda.on(Events.MessageCreate, (m) => {
    if (m.system) systemSeenByRuda.push(m);
  });
  const decisionOf = (id: string) => decided.find((d) => d.message.messageId === id)?.decision;

  // Without a starter: ruda's bot opens a public thread (THREAD_CREATED in the channel), then mentions eden there.
  const general = ruda.channels.cache.get(CHANNEL);
  if (general?.type !== ChannelType.GuildText) throw new Error("no channel");
  const standalone = await general.threads.create({ name: "standalone", type: ChannelType.PublicThread });
  const first = await runtime.discordSend({
    fromAgentId: "ruda",
    targetAgentId: "eden",
    message: "Can you check the migration?",
    threadId: standalone.id,
  });
  // With a starter, the runtime's own way (the starter's MESSAGE_UPDATE, no message); another topic, another thread.
  const second = await runtime.discordSend({
    fromAgentId: "ruda",
    targetAgentId: "eden",
    message: "And the docs?",
    topicId: "docs",
  });
  if (first.status !== "sent" || second.status !== "sent") throw new Error("not sent");
  expect(fx.emulator.messages(CHANNEL).find((m) => m.id === second.threadId)).toMatchObject({ type: 0 });
  await until(() => decisionOf(first.messageId) !== undefined, "the first mention to be decided");

  // eden's bot, the target of both mentions, adds and removes a person in both threads: system messages by eden.
  await until(() => eden.channels.cache.has(second.threadId), "eden to know the second thread");
  for (const threadId of [standalone.id, second.threadId]) {
    const thread = threadOf(eden, threadId);
    await thread.members.add(HUMAN);
    await thread.members.remove(HUMAN);
  }
  await threadOf(eden, standalone.id).members.add(HUMAN);
  const system = fx.emulator.messages().filter((m) => m.type !== 0 && m.type !== 19);
  expect(system.map((m) => [m.type, m.authorId, m.channelId])).toEqual([
    [18, RUDA, CHANNEL],
    [1, EDEN, standalone.id],
    [2, EDEN, standalone.id],
    [1, EDEN, second.threadId],
    [2, EDEN, second.threadId],
    [1, EDEN, standalone.id],
  ]);
  await until(() => systemSeenByRuda.length === system.length, "the clients to receive every system message");
  // A person's message after them, in the thread: once it is decided, the bridge has had every earlier one.
  const marker = await fx.emulator.postAsUser({
    userId: HUMAN,
    channelId: standalone.id,
    content: "following along",
  });
  await until(() => decisionOf(marker.messageId) !== undefined, "the marker to be decided");
  expect(decisionOf(marker.messageId)).toEqual({ action: "observe" });

  const systemIds = system.map((m) => m.id);
  expect(reached.filter((id) => systemIds.includes(id))).toEqual([]);
  expect(decided.filter((d) => systemIds.includes(d.message.messageId))).toEqual([]);
  expect(await mentionStatus(runtime, first.mentionId)).toBe("pending");
  expect(await mentionStatus(runtime, second.mentionId)).toBe("pending");

  // The same message passed on by hand, as discord.js gave it: the runtime drops it by its type alone.
  const added = systemSeenByRuda.find((m) => m.channelId === second.threadId) as Message;
  const inbound = toInboundDiscordMessage(added);
  expect(inbound).toMatchObject({ type: 1, authorId: EDEN, authorIsBot: true, mentionUserIds: [HUMAN] });
  expect(await runtime.handleDiscordMessage(inbound)).toEqual({ action: "drop", reason: "system_message" });
  expect(await mentionStatus(runtime, second.mentionId)).toBe("pending");

  // eden's answer ends the first mention, and ruda's reply is handed on: three system messages by eden
  // in that thread took nothing from the loop guard's 3.
  const answer = await threadOf(eden, standalone.id).send("Checked: the migration is safe to run.");
  await until(() => decisionOf(answer.id) !== undefined, "eden's answer");
  expect(decisionOf(answer.id)).toEqual({ action: "observe" });
  expect(await mentionStatus(runtime, first.mentionId)).toBe("responded");
  const reply = await threadOf(ruda, standalone.id).send(
    `<@${EDEN}> Great, can you run it tonight after the backup?`,
  );
  await until(() => decisionOf(reply.id) !== undefined, "ruda's reply");
  expect(decisionOf(reply.id)).toMatchObject({ action: "handle", agentId: "eden" });

  fx.detach();
  delete fx.detach;
  await runtime.stop();
  delete fx.runtime;
  const observed = [...savedThreadEntries(stateDir).keys()].filter((k) => k.startsWith("observed "));
  expect(observed).toContain(`observed ${standalone.id} ${answer.id}`);
  expect(observed.filter((k) => systemIds.some((id) => k.endsWith(` ${id}`)))).toEqual([]);
});
