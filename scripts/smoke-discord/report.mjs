// What the smoke run left in Discord, read back over the API and checked, and the checklist a person
// follows in the Discord app.
import { URLSearchParams } from "node:url";

/** Message types people and bots post (DEFAULT, REPLY); every other type is one of Discord's system messages. */
const POSTED_TYPES = new Set([0, 19]);
const DISCORD_EPOCH = 1_420_070_400_000n;

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `template` as a pattern: placeholders in `params` must read exactly so, `{minutes}` any whole number. */
function templatePattern(template, params) {
  const parts = template.split(/\{(\w+)\}/);
  const source = parts.map((part, i) =>
    i % 2 === 0 ? escapeRegExp(part) : part === "minutes" ? "\\d+" : escapeRegExp(String(params[part])),
  );
  return new RegExp(`^${source.join("")}$`);
}

const render = (template, params) =>
  template.replace(/\{(\w+)\}/g, (whole, name) => String(params[name] ?? whole));

/** The three posts of the timeline, what each must say, and whom each may ping. */
function expectedPosts({ messages, requestText, targetId, escalationId, reminded, escalated }) {
  const common = { target: `<@${targetId}>`, original: requestText, maxAttempts: 2 };
  const reminder = { ...common, attempts: 1, minutes: reminded[0]?.data.elapsedMinutes ?? 0 };
  const escalation = {
    ...common,
    attempts: 2,
    minutes: escalated[0]?.data.elapsedMinutes ?? 1,
    ping: `<@${escalationId}> `,
  };
  return [
    {
      kind: "the request",
      text: `<@${targetId}> ${requestText}`,
      pattern: new RegExp(`^${escapeRegExp(`<@${targetId}> ${requestText}`)}$`),
      pings: [targetId],
    },
    {
      kind: "the reminder",
      text: render(messages.reminder, reminder),
      pattern: templatePattern(messages.reminder, reminder),
      pings: [targetId],
    },
    {
      kind: "the escalation",
      text: render(messages.escalation, escalation),
      pattern: templatePattern(messages.escalation, escalation),
      pings: [escalationId],
    },
  ];
}

/** Whom a message pinged, as Discord reports it (allowed mentions applied), as `<@id>, <@id>`. */
const pingsOf = (message) =>
  [
    ...(message.mentions ?? []).map((user) => `<@${user.id}>`).sort(),
    ...(message.mention_everyone ? ["@everyone"] : []),
    ...(message.mention_roles ?? []).map((id) => `<@&${id}>`),
  ].join(", ");

async function readMessages(client, Routes, channelId, query) {
  const page = await client.rest.get(Routes.channelMessages(channelId), {
    query: new URLSearchParams(query),
  });
  return page.reverse();
}

/**
 * Reads the thread and the channel back as the requester's bot and checks the run: `checks` are the
 * lines a person reads (✔ or ✘), `failures` the ✘ ones, `posts` the timeline's posts with where they were found.
 */
export async function checkRun(o) {
  const { clients, discordJs, sent, settings } = o;
  const ids = Object.fromEntries(Object.entries(clients).map(([role, client]) => [role, client.user.id]));
  const posts = expectedPosts({ ...o, targetId: ids.target });
  const checks = [];
  const failures = [];
  const check = (ok, line) => {
    checks.push(`${ok ? "✔" : "✘"} ${line}`);
    if (!ok) failures.push(line);
  };

  check(
    o.reminded.length === 1,
    `the runtime reminded the target ${o.reminded.length === 1 ? "once" : `${o.reminded.length} times`}`,
  );
  const escalation = o.escalated[0];
  check(
    o.escalated.length === 1 && escalation.data.notified === true,
    o.escalated.length === 0
      ? "the runtime never escalated"
      : `the runtime escalated ${o.escalated.length === 1 ? "once" : `${o.escalated.length} times`}` +
          (escalation.data.notified
            ? ""
            : `, without posting (${escalation.data.errorMessage ?? "no reason"})`),
  );
  const mention = o.mentions.find((m) => m.id === sent.mentionId);
  check(
    mention?.status === "escalated" && mention.attempts === 2,
    `mentions() lists the mention as ${mention === undefined ? "nothing" : `${mention.status} after ${mention.attempts} attempts`}`,
  );

  const ourBots = new Set(Object.values(ids));
  const thread = await readMessages(clients.requester, discordJs.Routes, sent.threadId, { limit: "100" });
  const posted = thread.filter((m) => POSTED_TYPES.has(m.type));
  for (const post of posts) {
    const found = posted.filter((m) => post.pattern.test(m.content));
    post.found = found;
    check(
      found.length === 1,
      `${post.kind} is in the thread ${found.length === 1 ? "once" : `${found.length} times`}`,
    );
    for (const m of found) {
      check(m.author.id === ids.requester, `${post.kind} is posted by the requester's bot`);
      const expected = post.pings.map((id) => `<@${id}>`).join(", ");
      check(
        pingsOf(m) === expected,
        `${post.kind} pings ${expected} only` +
          (pingsOf(m) === expected ? "" : ` (it pings ${pingsOf(m) || "nobody"})`),
      );
    }
  }
  const order = posts.map((post) => posted.indexOf(post.found[0]));
  check(
    order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1])),
    "they are in the order request, reminder, escalation",
  );
  const others = posted.filter((m) => !posts.some((post) => post.found.includes(m)));
  check(
    others.length === 0,
    `nothing else is posted in the thread${others.length === 0 ? "" : ` (${others.length} more: ${others.map((m) => JSON.stringify(m.content.slice(0, 60))).join(", ")})`}`,
  );

  // The channel since the run started (a little earlier, for clock skew): the thread's starter only.
  const after = ((BigInt(o.since - 2_000) - DISCORD_EPOCH) << 22n).toString();
  const channel = await readMessages(clients.requester, discordJs.Routes, settings.channelId, {
    after,
    limit: "100",
  });
  const fromBots = channel.filter((m) => POSTED_TYPES.has(m.type) && ourBots.has(m.author.id));
  const starter = fromBots.find((m) => m.id === sent.threadId || m.thread?.id === sent.threadId);
  check(
    fromBots.length === 1 &&
      starter !== undefined &&
      starter.author.id === ids.requester &&
      pingsOf(starter) === "",
    `in the channel the bots posted only the thread's starter, pinging nobody` +
      (fromBots.length === 1 ? "" : ` (they posted ${fromBots.length} messages)`),
  );
  return { checks, failures, posts, starter, thread, mention, reminded: o.reminded, escalated: o.escalated };
}

/** The checklist for the Discord app, what was checked here, and what the runtime recorded. */
export function printReport(r) {
  const print = (line = "") => console.log(line);
  const readable = (text) =>
    Object.entries(r.clients).reduce(
      (out, [role, client]) => out.replaceAll(`<@${client.user.id}>`, `@${r.names[role]}`),
      text,
    );
  const quote = (text) =>
    readable(text)
      .split("\n")
      .map((line) => `       ${line}`)
      .join("\n");
  const pinged =
    r.settings.humanId === undefined
      ? `@${r.names.owner} (the owner's bot)`
      : `the user ${r.settings.humanId}`;
  const seconds = (ms) => `${Math.round(ms / 1000)} s`;
  print();
  print(`Look at it in Discord: ${r.link}`);
  print(
    `  In the channel: one message from ${r.names.requester}${r.starter ? ` ("${readable(r.starter.content)}")` : ""}, with the thread under it.`,
  );
  print(`  In the thread, in this order, each exactly once, all from ${r.names.requester}:`);
  const when = [
    "right away",
    `about ${seconds(r.settings.reminderMs)} later`,
    `about ${seconds(r.settings.reminderMs)} after that`,
  ];
  const whom = [
    `pings @${r.names.target}`,
    `pings @${r.names.target} again`,
    `pings ${pinged} only; names @${r.names.target} without pinging it`,
  ];
  r.posts.forEach((post, i) => {
    print(`    ${i + 1}. ${post.kind}, ${when[i]}: ${whom[i]}`);
    print(quote(post.found[0]?.content ?? post.text));
  });
  print(
    "  Must not be there: a second copy of any of them; anything from " +
      `${r.names.target} or ${r.names.owner}; a notification for anyone else (no @everyone, @here or role); ` +
      "a failure notice; a second thread.",
  );
  if (r.settings.humanId !== undefined)
    print(`  <@${r.settings.humanId}> got one notification from the thread: the escalation.`);
  print();
  print("Checked here (read back from Discord):");
  for (const line of r.checks) print(`  ${readable(line)}`);
  // Informational: Discord need not send a thread's messages to a bot outside the thread.
  const ownerPings = r.ownerPings.filter((ping) => ping.channelId === r.threadId);
  const ownerLine =
    r.settings.humanId !== undefined
      ? `${ownerPings.length === 0 ? "✔" : "–"} the owner's bot got ${ownerPings.length} pings over its gateway`
      : ownerPings.length > 0
        ? "✔ the owner's bot got the escalation's ping over its gateway"
        : "– the owner's bot saw no ping over its gateway within 5 s (Discord may not send thread messages to a bot outside the thread; look in Discord)";
  print(`  ${ownerLine}`);
  print();
  print("The runtime recorded:");
  for (const e of [...r.reminded, ...r.escalated])
    print(
      `  ${e.type}: attempts ${e.data.attempts}/${e.data.maxAttempts}, ${e.data.elapsedMinutes} min after the request`,
    );
  if (r.mention)
    print(
      `  mentions(): ${r.mention.id} → ${r.mention.targetAgentId}: ${r.mention.status}, attempts ${r.mention.attempts}`,
    );
  const kindOf = (id) => r.posts.find((post) => post.found.some((m) => m.id === id))?.kind ?? `message ${id}`;
  for (const { decision, message } of r.decisions.filter((d) => d.message.channelId === r.threadId))
    print(
      `  the bridge: ${kindOf(message.messageId)} → ${decision.action}${decision.agentId ? ` (${decision.agentId})` : ""}${decision.reason ? ` (${decision.reason})` : ""}`,
    );
}
