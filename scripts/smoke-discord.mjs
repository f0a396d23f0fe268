#!/usr/bin/env node
// The mention → reminder → escalation timeline on a real Discord server, for a person to look at
// (docs/discord-smoke.md). Three bots: the requester sends a mention to the target, which never
// answers; the requester's bot reminds it once, then escalates to the owner (the third bot, or
// DISCORD_SMOKE_HUMAN_ID). It reads the thread back, checks it, and prints what to look at in Discord.
//
//   DISCORD_SMOKE_TOKENS=<requester>,<target>,<owner> DISCORD_SMOKE_CHANNEL_ID=<id> npm run smoke:discord
//
// Optional: DISCORD_SMOKE_HUMAN_ID (the user the escalation pings instead of the owner's bot),
// DISCORD_SMOKE_REMINDER_MS (default 30000: the reminder after it, the escalation after twice it),
// DISCORD_SMOKE_LOCALE (ko, the default, or en). For testing this script against the emulator only:
// DISCORD_SMOKE_API_URL (discord.js `rest.api`) and DISCORD_SMOKE_FROM_SOURCE=1 (import src/ under
// `node --import tsx` instead of the built package).
// Exit 0: the runtime reminded and escalated, and the thread holds exactly what it should. Exit 1:
// anything else, with one line naming what is wrong. Without tokens and channel: skipped, exit 0.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { checkRun, printReport } from "./smoke-discord/report.mjs";
import { ROLES, SmokeError, readSettings, roleOf } from "./smoke-discord/settings.mjs";

const REQUEST = "smoke test of a2a-statecharts: please do not answer this";
/** How long past its due time the escalation is still waited for (Discord's latency, a 429's wait). */
const GRACE_MS = 15_000;

/** The package as a user imports it (self-reference to dist/), or src/ when testing the script. */
async function loadPackage(fromSource) {
  try {
    const [root, discord, discordJs] = await Promise.all(
      fromSource
        ? [import("../src/index.ts"), import("../src/discord/index.ts"), import("discord.js")]
        : [import("a2a-statecharts"), import("a2a-statecharts/discord"), import("discord.js")],
    );
    return { ...root, ...discord, discordJs };
  } catch (error) {
    if (!fromSource && error?.code === "ERR_MODULE_NOT_FOUND" && /a2a-statecharts|dist/.test(error.message))
      throw new SmokeError("the package is not built: run `npm run build` first");
    throw error;
  }
}

/** One strict discord.js client per role, logged in; a refused token is named by its index. */
async function loginAll(settings, { Client, Events, GatewayIntentBits }) {
  const intents = [
    GatewayIntentBits.Guilds,
    GatewayIntentBits.GuildMessages,
    GatewayIntentBits.MessageContent,
  ];
  const rest = {
    retries: 0,
    rejectOnRateLimit: ["/channels"],
    ...(settings.apiUrl ? { api: settings.apiUrl } : {}),
  };
  const clients = ROLES.map(() => new Client({ intents, rest }));
  const logins = await Promise.allSettled(
    clients.map(async (client, i) => {
      const ready = new Promise((resolve) => client.once(Events.ClientReady, resolve));
      await client.login(settings.tokens[i]);
      const timeout = sleep(30_000, "timeout", { ref: false });
      if ((await Promise.race([ready, timeout])) === "timeout") throw new Error("no READY within 30 s");
    }),
  );
  const failed = logins.findIndex((login) => login.status === "rejected");
  const ids = clients.map((client) => client.user?.id);
  const twin = ids.findIndex((id, i) => ids.indexOf(id) !== i);
  if (failed >= 0 || twin >= 0) {
    await Promise.all(clients.map((client) => client.destroy()));
    throw new SmokeError(
      failed >= 0
        ? loginProblem(failed, logins[failed].reason)
        : `DISCORD_SMOKE_TOKENS[${ids.indexOf(ids[twin])}] and [${twin}] are the same bot (${ids[twin]}): use three bots`,
    );
  }
  return Object.fromEntries(ROLES.map((role, i) => [role, clients[i]]));
}

function loginProblem(index, error) {
  const name = `DISCORD_SMOKE_TOKENS[${index}] (${roleOf(index)})`;
  if (error?.code === "TokenInvalid")
    return `DISCORD_SMOKE_TOKENS[${index}] was refused by Discord (401): not a valid bot token`;
  if (error?.code === "DisallowedIntents")
    return `${name}: Discord refused the Message Content intent; enable it under Bot → Privileged Gateway Intents`;
  return `${name} could not log in: ${error instanceof Error ? error.message : String(error)}`;
}

/** Each bot must see the channel; the channel must be a server text channel; the human a member there. */
async function checkChannel(settings, clients, { DiscordAPIError, Routes }) {
  const seen = await Promise.all(
    ROLES.map(async (role, i) => {
      try {
        return await clients[role].rest.get(Routes.channel(settings.channelId));
      } catch (error) {
        if (!(error instanceof DiscordAPIError)) throw error;
        throw new SmokeError(
          `DISCORD_SMOKE_CHANNEL_ID ${settings.channelId}: DISCORD_SMOKE_TOKENS[${i}] (${roleOf(i)}) cannot see it ` +
            `(${error.status} ${error.message}); invite the bot to the server and let it view the channel`,
        );
      }
    }),
  );
  const channel = seen[0];
  // Type 0, GUILD_TEXT: the runtime opens public threads (type 11), which announcement channels refuse.
  if (channel.guild_id === undefined || channel.type !== 0)
    throw new SmokeError(
      `DISCORD_SMOKE_CHANNEL_ID ${settings.channelId} is not a server text channel (its type is ${channel.type})`,
    );
  if (settings.humanId !== undefined) {
    if (ROLES.some((role) => clients[role].user.id === settings.humanId))
      throw new SmokeError(
        `DISCORD_SMOKE_HUMAN_ID ${settings.humanId} is one of the three bots; name a person`,
      );
    try {
      await clients.requester.rest.get(Routes.guildMember(channel.guild_id, settings.humanId));
    } catch (error) {
      if (!(error instanceof DiscordAPIError)) throw error;
      throw new SmokeError(
        `DISCORD_SMOKE_HUMAN_ID ${settings.humanId} is not a member of the channel's server (${error.status} ${error.message})`,
      );
    }
  }
  return { guildId: channel.guild_id, name: channel.name };
}

function runtimeConfig(settings, clients, escalationId) {
  const agent = (role) => ({ discordBotId: clients[role].user.id, name: clients[role].user.username });
  return {
    locale: settings.locale,
    agents: { requester: agent("requester"), target: agent("target") },
    discord: {
      // One reminder at responseTimeoutMs, the escalation a timeout later.
      a2aRetry: { responseTimeoutMs: settings.reminderMs, maxAttempts: 2, escalationMentionId: escalationId },
      collaboration: { defaultChannel: settings.channelId, allowedChannels: [settings.channelId] },
    },
  };
}

function sendProblem(error, settings) {
  const where = `DISCORD_SMOKE_CHANNEL_ID ${settings.channelId}`;
  if (error.code === "discord_permission")
    return (
      `${where}: the requester's bot (DISCORD_SMOKE_TOKENS[0]) may not post or open a thread there (${error.message}); ` +
      "it needs View Channel, Send Messages, Create Public Threads, Send Messages in Threads and Read Message History"
    );
  if (error.code === "discord_not_found") return `${where}: Discord answered 404 (${error.message})`;
  return `the runtime refused the request (${error.code}): ${error.message}`;
}

/** True once `done()` holds, false when `deadline` passes first; throws once Ctrl-C was pressed. */
async function waitFor(done, deadline, interrupted) {
  while (!done()) {
    if (interrupted.value) throw new SmokeError("interrupted");
    if (Date.now() > deadline) return false;
    await sleep(100, undefined, { ref: true });
  }
  return true;
}

async function main() {
  const settings = readSettings(process.env);
  if (settings === undefined) {
    console.log(
      "smoke:discord skipped: set DISCORD_SMOKE_TOKENS (three bot tokens, comma-separated: requester, target, " +
        "owner) and DISCORD_SMOKE_CHANNEL_ID to run it on a Discord server (docs/discord-smoke.md)",
    );
    return 0;
  }
  const pkg = await loadPackage(settings.fromSource);
  const started = Date.now();
  const stamp = () => `[${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s]`;
  const clients = await loginAll(settings, pkg.discordJs);
  const stateDir = mkdtempSync(join(tmpdir(), "a2a-smoke-discord-"));
  // The first Ctrl-C ends the wait and cleans up; a second one (no listener left) ends the process.
  const interrupted = { value: false };
  const onSignal = () => {
    interrupted.value = true;
  };
  process.once("SIGINT", onSignal);
  let runtime;
  let detach = () => {};
  try {
    const channel = await checkChannel(settings, clients, pkg.discordJs);
    const escalationId = settings.humanId ?? clients.owner.user.id;
    const names = Object.fromEntries(ROLES.map((role) => [role, clients[role].user.username]));
    console.log(
      `${stamp()} logged in: requester ${names.requester}, target ${names.target}, owner ${names.owner}; ` +
        `channel #${channel.name}; reminder after ${settings.reminderMs / 1000} s, escalation after ` +
        `${(2 * settings.reminderMs) / 1000} s`,
    );
    const events = [];
    const decisions = [];
    const ownerPings = [];
    runtime = pkg.createA2ARuntime({
      stateDir,
      config: runtimeConfig(settings, clients, escalationId),
      discord: pkg.createDiscordJsPort({ requester: clients.requester, target: clients.target }),
      logger: "warn",
    });
    runtime.onEvent((event) => events.push(event));
    await runtime.start();
    detach = pkg.bridgeDiscordJs(
      runtime,
      { requester: clients.requester, target: clients.target },
      {
        onDecision: (decision, message) => decisions.push({ decision, message }),
        onError: (error) =>
          console.warn(`${stamp()} bridge: ${error instanceof Error ? error.message : error}`),
      },
    );
    // The owner's own gateway: does the ping reach the one it is for?
    clients.owner.on(pkg.discordJs.Events.MessageCreate, (message) => {
      if (message.mentions.users.has(clients.owner.user.id))
        ownerPings.push({ id: message.id, channelId: message.channelId });
    });

    const requestText = `${REQUEST} (${new Date(started).toISOString()})`;
    const sent = await runtime.discordSend({
      fromAgentId: "requester",
      targetAgentId: "target",
      message: requestText,
      channelId: settings.channelId,
      topicId: "smoke",
    });
    if (sent.status !== "sent") throw new SmokeError(sendProblem(sent.error, settings));
    const link = `https://discord.com/channels/${channel.guildId}/${sent.threadId}`;
    console.log(`${stamp()} request posted in the thread ${link}`);
    const ours = (type) => events.filter((e) => e.type === type && e.data?.mentionId === sent.mentionId);
    let reported = 0;
    const escalated = await waitFor(
      () => {
        for (const event of events.slice(reported)) {
          if (event.data?.mentionId === sent.mentionId && event.type.startsWith("a2a.mention."))
            console.log(
              `${stamp()} ${event.type} (attempts ${event.data.attempts}/${event.data.maxAttempts})`,
            );
        }
        reported = events.length;
        return ours("a2a.mention.escalated").length > 0;
      },
      started + 2 * settings.reminderMs + Math.max(GRACE_MS, settings.reminderMs),
      interrupted,
    );
    await runtime.idle();
    // Discord delivers over the gateway a moment after the post: give the owner's ping that moment.
    if (escalated && settings.humanId === undefined)
      await waitFor(
        () => ownerPings.some((ping) => ping.channelId === sent.threadId),
        Date.now() + 5_000,
        interrupted,
      );
    const outcome = await checkRun({
      settings,
      clients,
      discordJs: pkg.discordJs,
      sent,
      since: started,
      escalationId,
      messages: runtime.messages,
      requestText,
      reminded: ours("a2a.mention.reminded"),
      escalated: ours("a2a.mention.escalated"),
      mentions: await runtime.mentions(),
    });
    printReport({
      ...outcome,
      link,
      threadId: sent.threadId,
      names,
      clients,
      settings,
      decisions,
      ownerPings,
    });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    if (outcome.failures.length > 0) {
      console.error(`smoke:discord failed after ${seconds} s: ${outcome.failures.join("; ")}`);
      return 1;
    }
    console.log(`smoke:discord passed in ${seconds} s: reminded and escalated once each`);
    return 0;
  } finally {
    process.off("SIGINT", onSignal);
    detach();
    await runtime?.stop();
    await Promise.all(ROLES.map((role) => clients[role].destroy()));
    rmSync(stateDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    console.error(
      `smoke:discord: ${error instanceof SmokeError ? error.message : (error?.stack ?? String(error))}`,
    );
    process.exitCode = 1;
  },
);
