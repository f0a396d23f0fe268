// bridgeDiscordJs routes: each "handle" decision reaches onHandle once (however many bot clients see
// the message), observe and drop do not; onDecision sees every decision; a failing onHandle goes to
// onError and the bridge goes on.
import { expect, it } from "vitest";
import { bridgeDiscordJs, createDiscordJsPort, type HandleDecision } from "../../src/discord/index.js";
import { createA2ARuntime, type PreflightResult } from "../../src/index.js";
import { loginStrictClient, until, useTwoBotEmulator } from "../support/discordClients.js";
import { tempDir } from "../support/tempDir.js";
import { textLogger } from "../../src/runtime/logger.js";

const CHANNEL = "1700000000000000010";
const RUDA = "1700000000000000101";
const EDEN = "1700000000000000102";
const HUMAN = "1700000000000000900";

const fx = useTwoBotEmulator({
  guild: "1700000000000000001",
  channel: CHANNEL,
  ruda: RUDA,
  eden: EDEN,
  human: HUMAN,
});

it("calls onHandle once per handle decision, with the session to run in; observe and drop only reach onDecision", async () => {
  const [ruda, eden] = await Promise.all([
    loginStrictClient(fx.emulator, RUDA, fx.clients),
    loginStrictClient(fx.emulator, EDEN, fx.clients),
  ]);
  const clientsById = { ruda, eden };
  const runtime = createA2ARuntime({
    stateDir: tempDir("a2a-bridge-"),
    config: {
      agents: { ruda: { discordBotId: RUDA }, eden: { discordBotId: EDEN } },
      discord: { collaboration: { defaultChannel: CHANNEL, allowedChannels: [CHANNEL] } },
    },
    discord: createDiscordJsPort(clientsById),
    logger: textLogger(() => {}),
  });
  fx.runtime = runtime;
  await runtime.start();
  const handled: HandleDecision[] = [];
  const decisions: Array<{ decision: PreflightResult; messageId: string }> = [];
  const errors: Array<{ error: unknown; messageId: string }> = [];
  let failNext = false;
  fx.detach = bridgeDiscordJs(runtime, clientsById, {
    onHandle: async (h) => {
      handled.push(h);
      if (failNext) {
        failNext = false;
        throw new Error("the gateway could not start the run");
      }
    },
    onDecision: (decision, message) => decisions.push({ decision, messageId: message.messageId }),
    onError: (error, message) => errors.push({ error, messageId: message.messageId }),
  });

  const say = (content: string) => fx.emulator.postAsUser({ userId: HUMAN, channelId: CHANNEL, content });
  const first = await say(`<@${EDEN}> <@${RUDA}> 배포 리뷰 부탁해요`);
  await until(() => decisions.length === 1, "the first decision");
  const plain = await say("점심 뭐 먹지");
  await until(() => decisions.length === 2, "the second decision");

  expect(handled).toEqual([
    {
      agentId: "eden",
      sessionKey: expect.stringContaining("agent:eden:"),
      message: expect.objectContaining({ messageId: first.messageId, authorId: HUMAN }),
      alsoAgentIds: ["ruda"],
    },
  ]);
  expect(decisions.map((d) => [d.messageId, d.decision.action])).toEqual([
    [first.messageId, "handle"],
    [plain.messageId, expect.not.stringMatching(/^handle$/)],
  ]);

  failNext = true;
  const failing = await say(`<@${RUDA}> 확인해줘`);
  await until(() => errors.length === 1, "the failing onHandle's error");
  expect(errors[0]).toMatchObject({
    messageId: failing.messageId,
    error: { message: /could not start the run/ },
  });
  const after = await say(`<@${RUDA}> 다시 확인해줘`);
  await until(() => handled.length === 3, "the message after the failure");
  expect(handled.map((h) => [h.agentId, h.message.messageId])).toEqual([
    ["eden", first.messageId],
    ["ruda", failing.messageId],
    ["ruda", after.messageId],
  ]);
});
