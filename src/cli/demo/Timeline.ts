import type { InspectionEvent } from "xstate";
import type { A2AEvent } from "../../policies/index.js";
import { activeStates } from "../../inspector/statechart.js";

interface Watched {
  ref: { getSnapshot?: () => unknown };
  machineId: string;
  parent?: string;
  /** ` ruda→eden` for a root actor, once its context is seen. */
  parties?: string;
  /** The tag of the scenario a root actor plays in ("" when none claimed it), once its context is seen. */
  scenario?: string;
  /** Restored from the state dir rather than started here (it or its root was stored before). */
  resumed: boolean;
  state?: string;
}

/** A line; without its time when it is to be stamped as it is printed. */
type Line = string | { stamped: (stamp: string) => string };

/** Column widths: a state is at most 18 characters, so `from → to` fits 40; longer text is cut. */
const ACTOR_WIDTH = 46;
const CHANGE_WIDTH = 40;

/** `+MM:SS.s` since the demo's start. */
export function demoStamp(elapsedMs: number): string {
  const tenths = Math.max(0, Math.floor(elapsedMs / 100));
  const minutes = Math.floor(tenths / 600);
  const seconds = (tenths % 600) / 10;
  return `+${String(minutes).padStart(2, "0")}:${seconds.toFixed(1).padStart(4, "0")}`;
}

/** `text` padded to `width` characters, or cut to fit with `…` so the next column stays in place. */
export function fit(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text.padEnd(width) : `${chars.slice(0, width - 1).join("")}…`;
}

/** What inspection tells of an actor (an `Actor` underneath, typed as the narrower ActorRefLike). */
interface InspectedActor {
  id: string;
  sessionId: string;
  logic?: { id?: unknown; root?: unknown };
  _parent?: { sessionId: string };
}

function machineIdOf(actor: InspectedActor): string | undefined {
  const logic = actor.logic;
  return logic !== undefined && typeof logic.id === "string" && logic.root !== undefined
    ? logic.id
    : undefined;
}

const fieldsOf = (x: unknown): Record<string, unknown> =>
  typeof x === "object" && x !== null ? (x as Record<string, unknown>) : {};
const text = (x: unknown): string | undefined => (typeof x === "string" ? x : undefined);

function partiesOf(context: Record<string, unknown>): string {
  const trace = fieldsOf(context.trace);
  const from = context.fromAgentId ?? trace.fromAgent ?? context.fromAgent;
  const to = context.targetAgentId ?? trace.toAgent ?? context.toAgent;
  return typeof from === "string" && typeof to === "string" ? ` ${from}→${to}` : "";
}

export interface TimelineOptions {
  /** Demo milliseconds since the start. */
  elapsed: () => number;
  print: (line: string) => void;
  /** Put before every actor's name, e.g. which process it lives in. */
  actorPrefix?: string;
}

/**
 * The demo's live timeline: a line per state transition of every statechart (from XState inspection)
 * and per A2A event. A scenario claims the key it passes to the runtime (routeKey or topicId): the root
 * actor whose context carries it, its children and its conversation's or mention's events get its tag.
 */
export class Timeline {
  private readonly watched = new Map<string, Watched>();
  /** Root actors stored before this process started: "(resumed)" whenever the runtime hosts them again. */
  readonly stored = new Set<string>();
  /** Scenario tag by the key the scenario claimed (another process's timeline makes the same claims). */
  readonly claimed = new Map<string, string>();
  /** Scenario tag by the conversation and mention ids of its root actors (its events carry them). */
  private readonly ofIds = new Map<string, string>();
  private tagWidth = 0;
  /** Lines held back until a finished child's final snapshot: XState lets its parent transition first. */
  private readonly held: Array<{ child: string; lines: Line[] }> = [];
  transitions = 0;

  constructor(private readonly o: TimelineOptions) {}

  /** Tags with `tag` every actor whose root's context has `key` as its routeKey or topicId. */
  claim(key: string, tag: string): void {
    this.claimed.set(key, tag);
    this.tagWidth = Math.max(this.tagWidth, [...tag].length);
  }

  readonly inspect = (event: InspectionEvent): void => {
    if (event.type === "@xstate.actor") {
      this.watch(event.actorRef as unknown as InspectedActor);
      return;
    }
    if (event.type === "@xstate.event") {
      // A child's done event on its way to the parent: hold the parent's lines until the child's.
      const source = event.sourceRef?.sessionId;
      if (
        source !== undefined &&
        this.watched.has(source) &&
        event.event.type.startsWith("xstate.done.actor.")
      ) {
        this.held.push({ child: source, lines: [] });
      }
      return;
    }
    if (event.type !== "@xstate.snapshot") return;
    const sessionId = event.actorRef.sessionId;
    const index = this.held.findLastIndex((h) => h.child === sessionId);
    const released = index < 0 ? undefined : this.held.splice(index, 1)[0];
    const watched = this.watched.get(sessionId);
    if (watched !== undefined) this.transition(watched, event.snapshot, event.event.type);
    // The child's line is out: the parent's lines it held follow, stamped now so time never goes back.
    for (const line of released?.lines ?? []) this.echo(line);
  };

  readonly onA2AEvent = (e: A2AEvent): void => {
    const detail = describeEvent(e);
    if (detail === undefined) return;
    const data = fieldsOf(e.data);
    const tag =
      (e.routeKey === undefined ? undefined : this.claimed.get(e.routeKey)) ??
      [e.conversationId, text(data.mentionId)]
        .map((id) => (id === undefined ? undefined : this.ofIds.get(id)))
        .find((t) => t !== undefined);
    this.line(tag ?? "", "event", e.type, detail);
  };

  /** A line of its own, under the tag of the scenario that claimed `key` (none without a key). */
  note(message: string, key?: string): void {
    const tag = key === undefined ? "" : (this.claimed.get(key) ?? "");
    this.echo({ stamped: (stamp) => `  ${stamp}  ${this.tagColumn(tag)}${message}` });
  }

  private watch(actor: InspectedActor): void {
    const machineId = machineIdOf(actor);
    if (machineId === undefined) return;
    const parent = actor._parent?.sessionId;
    const resumed =
      parent === undefined ? this.stored.has(actor.id) : (this.watched.get(parent)?.resumed ?? false);
    this.watched.set(actor.sessionId, {
      resumed,
      ref: actor as Watched["ref"],
      machineId,
      ...(parent === undefined ? {} : { parent }),
    });
  }

  private transition(watched: Watched, snapshot: unknown, cause: string): void {
    const state = activeStates(fieldsOf(snapshot).value, undefined).label;
    if (watched.state === state) return;
    if (watched.parent === undefined) this.learnRoot(watched, fieldsOf(snapshot).context);
    const from = watched.state ?? (watched.resumed ? "(resumed)" : "(start)");
    watched.state = state;
    this.transitions += 1;
    const root = this.rootOf(watched);
    this.line(root.scenario ?? "", this.labelOf(watched), `${from} → ${state}`, cause);
  }

  /** Who a root actor is between, and the scenario that claimed it, from its context. */
  private learnRoot(w: Watched, context: unknown): void {
    if (w.scenario !== undefined) return;
    const c = fieldsOf(context);
    w.parties = partiesOf(c);
    const key = [text(c.routeKey), text(c.topicId)].find((k) => k !== undefined && this.claimed.has(k));
    w.scenario = key === undefined ? "" : (this.claimed.get(key) ?? "");
    if (w.scenario === "") return;
    for (const id of [text(c.conversationId), text(c.collaborationId)]) {
      if (id !== undefined) this.ofIds.set(id, w.scenario);
    }
  }

  private rootOf(w: Watched): Watched {
    const parent = w.parent === undefined ? undefined : this.watched.get(w.parent);
    if (parent !== undefined) return this.rootOf(parent);
    // A child can change state before its root's first snapshot is seen: read the root's context.
    this.learnRoot(w, fieldsOf(w.ref.getSnapshot?.()).context);
    return w;
  }

  private labelOf(w: Watched): string {
    const parent = w.parent === undefined ? undefined : this.watched.get(w.parent);
    if (parent !== undefined) return `${this.labelOf(parent)} › ${w.machineId}`;
    return `${this.o.actorPrefix ?? ""}${w.machineId}${w.parties ?? ""}`;
  }

  private tagColumn(tag: string): string {
    return this.tagWidth === 0 ? "" : `${fit(tag, this.tagWidth)}  `;
  }

  private line(tag: string, actor: string, change: string, cause: string): void {
    this.echo({
      stamped: (stamp) =>
        `  ${stamp}  ${this.tagColumn(tag)}${fit(actor, ACTOR_WIDTH)} ${fit(change, CHANGE_WIDTH)} ${cause}`,
    });
  }

  /** A line printed as it is (another process's timeline line, a progress line), in order with ours. */
  echo(line: Line): void {
    const holding = this.held.at(-1);
    if (holding !== undefined) holding.lines.push(line);
    else this.o.print(typeof line === "string" ? line : line.stamped(demoStamp(this.o.elapsed())));
  }
}

function describeEvent(e: A2AEvent): string | undefined {
  switch (e.type) {
    case "a2a.retry":
      return `${e.data.errorCode}: retry ${e.data.attempt} after ${e.data.backoffMs} ms`;
    case "a2a.complete":
      return (
        `${e.data.messageIntent}, ${e.data.actualTurns}/${e.data.effectiveTurns} turns` +
        (e.data.terminationReason === undefined ? "" : ` (${e.data.terminationReason})`) +
        (e.data.errorCode === undefined ? "" : `, ${e.data.errorCode}`)
      );
    case "a2a.mention.reminded":
    case "a2a.mention.escalated":
      return `${e.data.targetAgentId}, attempt ${e.data.attempts}/${e.data.maxAttempts}, ${e.data.elapsedMinutes} min`;
    case "a2a.collaborate.failed":
      return `${e.data.errorCode ?? "failed"}${e.data.escalate === true ? ", escalated" : ""}`;
    default:
      return undefined;
  }
}
