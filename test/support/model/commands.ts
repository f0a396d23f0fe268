import fc from "fast-check";
import { BOTS, HUMAN } from "../runtimeFakes.js";
import { checkMentions, checkPosts } from "./checks.js";
import type { MentionModel } from "./mentionModel.js";
import { AGENTS, type AgentId, LIFECYCLE } from "./settings.js";
import type { SimulatedGateway } from "./simulatedGateway.js";

/** What the commands share on the model side: the mentions and a counter that makes each request unique. */
export interface Model {
  mentions: MentionModel;
  sends: number;
  /** The virtual clock's time. */
  now: () => number;
}

// A write cut short is retried after a backoff, and the clock moves meanwhile: what falls due then is
// posted when the retry lands, later than the model can tell. Cut a write short only with nothing due this soon.
const SHORT_WRITE_QUIET_MS = 30_000;

type Command = fc.AsyncCommand<Model, SimulatedGateway>;

/** Where a simulated crash falls: after this many more writes, with maybe one write cut short first. */
export interface CrashPoint {
  afterWrites: number;
  /** The n-th write from now writes half its buffer (a full disk) and reports it; the crash comes after. */
  shortWrite?: number | undefined;
}

interface Send {
  from: AgentId;
  to: AgentId;
  urgent: boolean;
}

/** The running process will die after `point.afterWrites` more writes, one of them maybe cut short. */
function planCrash(real: SimulatedGateway, point: CrashPoint): void {
  const generation = real.running().generation;
  generation.crashAfterMutations = generation.mutations + point.afterWrites;
  if (point.shortWrite !== undefined) generation.shortWriteAt = generation.mutations + point.shortWrite;
}

/** A write is cut short only with nothing due within SHORT_WRITE_QUIET_MS. */
function quietForShortWrite(model: Readonly<Model>, point: CrashPoint): boolean {
  return (
    point.shortWrite === undefined ||
    (model.mentions.soonestDue() ?? Number.POSITIVE_INFINITY) > model.now() + SHORT_WRITE_QUIET_MS
  );
}

function describeCrash(point: CrashPoint): string {
  const short = point.shortWrite === undefined ? "" : `, short write #${point.shortWrite}`;
  return `after ${point.afterWrites} writes${short}`;
}

/** After every command: the runtime agrees with the model, and Discord holds exactly what is owed. */
async function check(model: Model, real: SimulatedGateway): Promise<void> {
  checkMentions(model.mentions, await real.run((r) => r.mentions()));
  checkPosts(model.mentions, real.discord);
}

/** A discordSend; acknowledged (added to the model) only if the process answered it before it died. */
async function send(model: Model, real: SimulatedGateway, s: Send): Promise<void> {
  model.sends += 1;
  const text = `요청 ${model.sends}: 확인 부탁`;
  const outcome = await real.drive(
    real.run((r) =>
      r.discordSend({ fromAgentId: s.from, targetAgentId: s.to, message: text, urgent: s.urgent }),
    ),
  );
  // Time passes while a failed write is retried: what fell due meanwhile fired.
  model.mentions.advanceTo(real.clock.now());
  if (outcome.dead) return;
  const result = outcome.value;
  // Not this model's subject: an agent that just handled B's answer replies in that thread.
  if (result.status === "rejected" && result.error.code === "reply_in_thread") return;
  if (result.status !== "sent")
    throw new Error(`discordSend ${text} was refused: ${JSON.stringify(result.error)}`);
  const sentAt = real.discord.timeOf(result.messageId);
  if (sentAt === undefined)
    throw new Error(`discordSend ${text} answered sent, but Discord has no message ${result.messageId}`);
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
    await send(model, real, this.s);
    await check(model, real);
  }
  toString = () => `send(${this.s.from}→${this.s.to}${this.s.urgent ? ", urgent" : ""})`;
}

class ReplyCommand implements Command {
  constructor(
    readonly pick: number,
    readonly byTarget: boolean,
    /** The process is killed while it handles the reply, then the next one starts at once. */
    readonly crash?: CrashPoint,
  ) {}
  check = (model: Readonly<Model>) =>
    model.mentions.mentions.length > 0 && (this.crash === undefined || quietForShortWrite(model, this.crash));
  async run(model: Model, real: SimulatedGateway) {
    const mentions = model.mentions.mentions;
    const mention = mentions[this.pick % mentions.length];
    if (mention === undefined) throw new Error("reply: the model has no mention (check() allows none)");
    const author = this.byTarget ? BOTS[mention.targetAgentId as AgentId] : HUMAN;
    const message = {
      threadId: mention.threadId,
      authorAgentId: this.byTarget ? mention.targetAgentId : undefined,
      at: real.clock.now(),
    };
    if (this.crash !== undefined) planCrash(real, this.crash);
    const outcome = await real.drive(
      real.run((r) =>
        r.handleDiscordMessage({
          messageId: real.discord.nextId(),
          channelId: mention.threadId,
          threadId: mention.threadId,
          authorId: author,
          authorIsBot: this.byTarget,
          content: this.byTarget ? "확인했습니다, 진행하겠습니다." : "사람이 끼어들었습니다",
          mentionUserIds: [],
          ts: message.at,
        }),
      ),
    );
    if (!outcome.dead) model.mentions.message(message);
    model.mentions.advanceTo(real.clock.now());
    if (this.crash !== undefined) {
      await real.settle();
      await real.crash();
      await real.start();
      if (outcome.dead) {
        const listed = await real.run((r) => r.mentions());
        const responded = new Set(listed.filter((m) => m.status === "responded").map((m) => m.id));
        model.mentions.unacknowledgedMessage(message, (id) => responded.has(id));
      }
    }
    await check(model, real);
  }
  toString = () => {
    const crash = this.crash === undefined ? "" : `, crash ${describeCrash(this.crash)}`;
    return `reply(mention #${this.pick}, ${this.byTarget ? "target bot" : "human"}${crash})`;
  };
}

class AdvanceCommand implements Command {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(model: Model, real: SimulatedGateway) {
    const to = real.clock.now() + this.ms;
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
    real.moveTo(real.clock.now() + this.downMs);
    await real.start();
    model.mentions.startAt(real.clock.now());
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
  check = (model: Readonly<Model>) => quietForShortWrite(model, this.point);
  async run(model: Model, real: SimulatedGateway) {
    planCrash(real, this.point);
    if ("send" in this.during) {
      await send(model, real, this.during.send);
      await real.settle();
    } else {
      await real.advanceTo(real.clock.now() + this.during.advanceMs);
      model.mentions.advanceTo(real.clock.now());
    }
    await real.crash();
    // A crash while time passes restarts where the process died (downMs 0): whether the reminder due
    // then was recorded or not, the next process then owes the same thing.
    real.moveTo(real.clock.now() + this.downMs);
    await real.start();
    model.mentions.startAt(real.clock.now());
    await check(model, real);
  }
  toString = () => {
    const what =
      "send" in this.during
        ? `send(${this.during.send.from}→${this.during.send.to})`
        : `advance(${this.during.advanceMs / 1000}s)`;
    return `crash(during ${what}, ${describeCrash(this.point)}${"send" in this.during ? `, down ${this.downMs / 1000}s` : ""})`;
  };
}

/** The running process stops; after `downMs` a process starts and is killed while recovering; the next one runs. */
class CrashWhileStartingCommand implements Command {
  constructor(
    readonly downMs: number,
    readonly afterWrites: number,
  ) {}
  check = () => true;
  async run(model: Model, real: SimulatedGateway) {
    await real.stop();
    real.moveTo(real.clock.now() + this.downMs);
    await real.startAndCrash(this.afterWrites);
    // Both start at the same instant: an overdue reminder the first posted but did not record is
    // posted again with the same nonce, so once, at that instant.
    await real.start();
    model.mentions.startAt(real.clock.now());
    await check(model, real);
  }
  toString = () => `crashWhileStarting(down ${this.downMs / 1000}s, after ${this.afterWrites} writes)`;
}

/** The running process stops; two processes start on the directory at the same instant: one may hold it. */
class SimultaneousStartCommand implements Command {
  /** Scheduling noise for each process's fs calls (see Generation.delays). */
  constructor(readonly delays: [number[], number[]]) {}
  check = () => true;
  async run(model: Model, real: SimulatedGateway) {
    await real.stop();
    const [a, b] = [real.spawn(), real.spawn()];
    a.generation.delays = [...this.delays[0]];
    b.generation.delays = [...this.delays[1]];
    const starts = await Promise.allSettled([a, b].map((p) => real.enterProcess(p, () => p.runtime.start())));
    const holders = [a, b].filter((_, i) => starts[i]?.status === "fulfilled");
    const [holder] = holders;
    if (holder === undefined || holders.length !== 1) {
      const why = starts.map((s) => (s.status === "fulfilled" ? "started" : String(s.reason))).join("; ");
      throw new Error(`two processes started on ${real.dir} at once and ${holders.length} hold it: ${why}`);
    }
    await real.adopt(holder, [a, b]);
    model.mentions.startAt(real.clock.now());
    await check(model, real);
  }
  toString = () => `simultaneousStart(noise ${this.delays.map((d) => `[${d.join(",")}]`).join(" ")})`;
}

const agentPair = fc
  .tuple(fc.constantFrom(...AGENTS), fc.constantFrom(...AGENTS))
  .filter(([from, to]) => from !== to);
const timeout = LIFECYCLE.responseTimeoutMs;

/** The command mix; each sequence is short, and fast-check shrinks a failing one. */
export function modelCommands(replayPath?: string): fc.Arbitrary<Iterable<Command>> {
  const sends = agentPair.chain(([from, to]) => fc.boolean().map((urgent) => ({ from, to, urgent })));
  const advance = fc.integer({ min: 1_000, max: 3 * timeout });
  const downtime = fc.integer({ min: 0, max: 4 * timeout });
  const noise = fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 8 });
  const afterWrites = fc.integer({ min: 0, max: 40 });
  // Writes are cut short while sending or answering, never while time passes: there a failed write
  // delays what falls due, which a crash then makes the model unable to time.
  const crashPoint: fc.Arbitrary<CrashPoint> = fc
    .tuple(afterWrites, fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined }))
    .map(([n, shortWrite]) => ({ afterWrites: n, shortWrite }));
  const sendCrash = fc
    .tuple(sends, crashPoint, downtime)
    .map(([send, point, downMs]) => new CrashCommand({ send }, point, downMs));
  const advanceCrash = fc
    .tuple(advance, afterWrites)
    .map(([advanceMs, n]) => new CrashCommand({ advanceMs }, { afterWrites: n }, 0));
  return fc.commands(
    [
      sends.map((s) => new SendCommand(s)),
      fc.tuple(fc.nat(), fc.boolean()).map(([pick, byTarget]) => new ReplyCommand(pick, byTarget)),
      fc
        .tuple(fc.nat(), fc.boolean(), crashPoint)
        .map(([pick, byTarget, point]) => new ReplyCommand(pick, byTarget, point)),
      advance.map((ms) => new AdvanceCommand(ms)),
      downtime.map((ms) => new RestartCommand(ms)),
      sendCrash,
      advanceCrash,
      fc.tuple(downtime, afterWrites).map(([downMs, n]) => new CrashWhileStartingCommand(downMs, n)),
      fc.tuple(noise, noise).map((delays) => new SimultaneousStartCommand(delays)),
    ],
    { maxCommands: 25, ...(replayPath === undefined ? {} : { replayPath }) },
  );
}
