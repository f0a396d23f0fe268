import fc from "fast-check";
import type { A2ARuntime } from "../../../src/index.js";
import { BOTS, HUMAN } from "../runtimeFakes.js";
import { checkMentions, checkPosts } from "./checks.js";
import type { MentionModel } from "./mentionModel.js";
import { AGENTS, type AgentId, LIFECYCLE } from "./settings.js";
import type { SimulatedGateway } from "./simulatedGateway.js";

/** What the commands share on the model side: the mentions and a counter that makes each request unique. */
export interface Model {
  mentions: MentionModel;
  sends: number;
}

type Command = fc.AsyncCommand<Model, SimulatedGateway>;

/** Where a simulated crash falls: after this many more writes, with maybe one write cut short first. */
export interface CrashPoint {
  afterWrites: number;
  /** The n-th write from now writes half its buffer (a full disk) and reports it; the crash comes after. */
  shortWrite?: number;
}

interface Send {
  from: AgentId;
  to: AgentId;
  urgent: boolean;
}

/** After every command: the runtime agrees with the model, and Discord holds exactly what is owed. */
async function check(model: Model, real: SimulatedGateway): Promise<void> {
  checkMentions(model.mentions, await real.run((r) => r.mentions()));
  checkPosts(model.mentions, real.discord);
}

async function send(
  model: Model,
  real: SimulatedGateway,
  s: Send,
  runtime: A2ARuntime,
  alive: () => boolean,
) {
  model.sends += 1;
  const text = `요청 ${model.sends}: 확인 부탁`;
  const sentAt = real.clock.now;
  const result = await runtime.discordSend({
    fromAgentId: s.from,
    targetAgentId: s.to,
    message: text,
    urgent: s.urgent,
  });
  // A process killed before it could answer acknowledged nothing.
  if (!alive()) return;
  if (result.status !== "sent")
    throw new Error(`discordSend ${text} was refused: ${JSON.stringify(result.error)}`);
  model.mentions.acknowledge({
    id: result.mentionId,
    threadId: result.threadId,
    targetAgentId: s.to,
    text,
    urgent: s.urgent,
    at: sentAt,
  });
}

class SendCommand implements Command {
  constructor(readonly s: Send) {}
  check = () => true;
  async run(model: Model, real: SimulatedGateway) {
    await real.run((r) => send(model, real, this.s, r, () => true));
    await real.settle();
    await check(model, real);
  }
  toString = () => `send(${this.s.from}→${this.s.to}${this.s.urgent ? ", urgent" : ""})`;
}

class ReplyCommand implements Command {
  constructor(
    readonly pick: number,
    readonly byTarget: boolean,
  ) {}
  check = (model: Readonly<Model>) => model.mentions.mentions.length > 0;
  async run(model: Model, real: SimulatedGateway) {
    const mentions = model.mentions.mentions;
    const mention = mentions[this.pick % mentions.length];
    if (mention === undefined) throw new Error("reply: the model has no mention (check() allows none)");
    const author = this.byTarget ? BOTS[mention.targetAgentId as AgentId] : HUMAN;
    const ts = real.clock.now;
    await real.run((r) =>
      r.handleDiscordMessage({
        messageId: real.discord.nextId(),
        channelId: mention.threadId,
        threadId: mention.threadId,
        authorId: author,
        authorIsBot: this.byTarget,
        content: this.byTarget ? "확인했습니다, 진행하겠습니다." : "사람이 끼어들었습니다",
        mentionUserIds: [],
        ts,
      }),
    );
    model.mentions.message({
      threadId: mention.threadId,
      authorAgentId: this.byTarget ? mention.targetAgentId : undefined,
      at: ts,
    });
    await real.settle();
    await check(model, real);
  }
  toString = () => `reply(mention #${this.pick}, ${this.byTarget ? "target bot" : "human"})`;
}

class AdvanceCommand implements Command {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(model: Model, real: SimulatedGateway) {
    const to = real.clock.now + this.ms;
    await real.advanceTo(to);
    model.mentions.advanceTo(to);
    await check(model, real);
  }
  toString = () => `advance(${this.ms / 1000}s)`;
}

class RestartCommand implements Command {
  constructor(readonly downMs: number) {}
  check = () => true;
  async run(model: Model, real: SimulatedGateway) {
    await real.stop();
    real.clock.moveTo(real.clock.now + this.downMs);
    await real.start();
    model.mentions.startAt(real.clock.now);
    await check(model, real);
  }
  toString = () => `restart(down ${this.downMs / 1000}s)`;
}

/** The process is killed between two writes while it sends or while time passes; a new one starts. */
class CrashCommand implements Command {
  constructor(
    readonly during: { send: Send } | { advanceMs: number },
    readonly point: CrashPoint,
    readonly downMs: number,
  ) {}
  check = () => true;
  async run(model: Model, real: SimulatedGateway) {
    const generation = real.running().generation;
    generation.crashAfterMutations = generation.mutations + this.point.afterWrites;
    if (this.point.shortWrite !== undefined)
      generation.shortWriteAt = generation.mutations + this.point.shortWrite;
    const alive = () => !generation.dead;
    if ("send" in this.during) {
      const sending = real.run((r) => send(model, real, (this.during as { send: Send }).send, r, alive));
      await Promise.race([sending, untilDead(alive)]);
      await real.settle();
    } else {
      await real.advanceTo(real.clock.now + this.during.advanceMs);
      model.mentions.advanceTo(real.clock.now);
    }
    await real.crash();
    // After a crash mid-way through time passing, the clock stays where the process died: whether the
    // reminder due then was recorded or not, the next process owes the same thing.
    if ("send" in this.during) real.clock.moveTo(real.clock.now + this.downMs);
    await real.start();
    model.mentions.startAt(real.clock.now);
    await check(model, real);
  }
  toString = () => {
    const what =
      "send" in this.during
        ? `send(${this.during.send.from}→${this.during.send.to})`
        : `advance(${this.during.advanceMs / 1000}s)`;
    const short = this.point.shortWrite === undefined ? "" : `, short write #${this.point.shortWrite}`;
    return `crash(during ${what}, after ${this.point.afterWrites} writes${short}${"send" in this.during ? `, down ${this.downMs / 1000}s` : ""})`;
  };
}

/** The running process stops; two processes start on the directory at the same instant: one may hold it. */
class SimultaneousStartCommand implements Command {
  check = () => true;
  async run(model: Model, real: SimulatedGateway) {
    await real.stop();
    const [a, b] = [real.spawn(), real.spawn()];
    const starts = await Promise.allSettled([a, b].map((p) => real.enterProcess(p, () => p.runtime.start())));
    const holders = [a, b].filter((_, i) => starts[i]?.status === "fulfilled");
    const [holder] = holders;
    if (holder === undefined || holders.length !== 1) {
      const why = starts.map((s) => (s.status === "fulfilled" ? "started" : String(s.reason))).join("; ");
      throw new Error(`two processes started on ${real.dir} at once and ${holders.length} hold it: ${why}`);
    }
    await real.adopt(holder, [a, b]);
    model.mentions.startAt(real.clock.now);
    await check(model, real);
  }
  toString = () => "simultaneousStart()";
}

function untilDead(alive: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const poll = () => (alive() ? setImmediate(poll) : resolve());
    poll();
  });
}

const agentPair = fc
  .tuple(fc.constantFrom(...AGENTS), fc.constantFrom(...AGENTS))
  .filter(([from, to]) => from !== to);
const timeout = LIFECYCLE.responseTimeoutMs;

/** The command mix; each sequence is short, and fast-check shrinks a failing one. */
export function modelCommands(replayPath?: string): fc.Arbitrary<Iterable<Command>> {
  const sends = agentPair.chain(([from, to]) => fc.boolean().map((urgent) => ({ from, to, urgent })));
  const advance = fc.integer({ min: 1_000, max: 3 * timeout });
  const crashPoint: fc.Arbitrary<CrashPoint> = fc.record(
    { afterWrites: fc.integer({ min: 0, max: 40 }), shortWrite: fc.integer({ min: 1, max: 20 }) },
    { requiredKeys: ["afterWrites"] },
  );
  return fc.commands(
    [
      sends.map((s) => new SendCommand(s)),
      fc.tuple(fc.nat(), fc.boolean()).map(([pick, byTarget]) => new ReplyCommand(pick, byTarget)),
      advance.map((ms) => new AdvanceCommand(ms)),
      fc.integer({ min: 0, max: 4 * timeout }).map((ms) => new RestartCommand(ms)),
      fc
        .tuple(
          fc.oneof(
            sends.map((send) => ({ send })),
            advance.map((advanceMs) => ({ advanceMs })),
          ),
          crashPoint,
          fc.integer({ min: 0, max: 4 * timeout }),
        )
        .map(([during, point, downMs]) => new CrashCommand(during, point, downMs)),
      fc.constant(null).map(() => new SimultaneousStartCommand()),
    ],
    { maxCommands: 25, ...(replayPath === undefined ? {} : { replayPath }) },
  );
}
