// A gateway that installs only `a2a-statecharts xstate`: its own Discord code behind a `DiscordPort`, no
// discord.js. The root and ./durable must type-check and run without it: one `discordSend`, answered by
// the target's bot in the thread, ends `responded`. ./discord, which needs discord.js, says so.
import { createA2ARuntime, type DiscordPort, type InboundDiscordMessage } from "a2a-statecharts";
import { createMemoryStore } from "a2a-statecharts/durable";

const IDS = { channel: "1500000000000000010", alpha: "1500000000000000101", beta: "1500000000000000102" };

async function main(): Promise<void> {
  let next = 1_500_000_000_000_001_000n;
  const posted: Array<{ channelId: string; content: string }> = [];
  // The gateway's own Discord client, reduced to what the runtime asks of it.
  const discord: DiscordPort = {
    async sendMessage(p) {
      posted.push({ channelId: p.channelId, content: p.content });
      return { messageId: String((next += 1n)) };
    },
    async createThread(p) {
      return { threadId: p.fromMessageId ?? String((next += 1n)) };
    },
  };
  const runtime = createA2ARuntime({
    store: createMemoryStore(),
    stateDir: process.argv[2] ?? ".a2a-state",
    discord,
    config: {
      agents: { alpha: { discordBotId: IDS.alpha }, beta: { discordBotId: IDS.beta } },
      discord: { collaboration: { defaultChannel: IDS.channel, allowedChannels: [IDS.channel] } },
    },
  });
  await runtime.start();
  try {
    const sent = await runtime.discordSend({
      fromAgentId: "alpha",
      targetAgentId: "beta",
      message: "Status?",
    });
    if (sent.status !== "sent") throw new Error(`discordSend: ${JSON.stringify(sent)}`);
    const answer: InboundDiscordMessage = {
      messageId: String((next += 1n)),
      channelId: sent.threadId,
      threadId: sent.threadId,
      parentChannelId: IDS.channel,
      authorId: IDS.beta,
      authorIsBot: true,
      content: "All green.",
      mentionUserIds: [],
      ts: Date.now(),
    };
    await runtime.handleDiscordMessage(answer);
    const mention = (await runtime.mentions()).find((m) => m.id === sent.mentionId);
    if (mention?.status !== "responded") throw new Error(`the mention is ${mention?.status}, not responded`);
    console.log(`without discord.js: mention ${mention.status} after ${posted.length} posts`);
  } finally {
    await runtime.stop();
  }
  const adapter = await import("a2a-statecharts/discord").then(
    () => "loaded",
    (error: { code?: string; message?: string }) => `${error.code}: ${error.message}`,
  );
  if (!/ERR_MODULE_NOT_FOUND: Cannot find package 'discord\.js'/.test(adapter)) {
    throw new Error(
      `a2a-statecharts/discord without discord.js: expected a missing-package error, got ${adapter}`,
    );
  }
  console.log("without discord.js: a2a-statecharts/discord names discord.js as missing");
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
