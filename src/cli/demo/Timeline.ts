import type { InspectionEvent } from "xstate";
import type { A2AEvent } from "../../services/index.js";

interface Watched {
  ref: { getSnapshot?: () => unknown };
  machineId: string;
  parent?: string;
  /** ` ruda→eden` for a root actor, once its context is seen. */
  parties?: string;
  /** Restored from the state dir rather than started here (it or its root was stored before). */
  resumed: boolean;
  state?: string;
}

/** `+MM:SS.s` since the demo's start. */
export function demoStamp(elapsedMs: number): string {
  const tenths = Math.max(0, Math.floor(elapsedMs / 100));
  const minutes = Math.floor(tenths / 600);
  const seconds = (tenths % 600) / 10;
  return `+${String(minutes).padStart(2, "0")}:${seconds.toFixed(1).padStart(4, "0")}`;
}

/** A state value as one string: `awaitingResponse.pending`; parallel regions joined with `|`. */
export function stateName(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || typeof value !== "object") return String(value);
  return Object.entries(value)
    .map(([key, child]) => {
      const inner = stateName(child);
      return inner === "" || (typeof child === "object" && Object.keys(child as object).length === 0)
        ? key
        : `${key}.${inner}`;
    })
    .join("|");
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

function partiesOf(context: unknown): string {
  const c = (context ?? {}) as Record<string, unknown>;
  const trace = (c.trace ?? {}) as Record<string, unknown>;
  const from = c.fromAgentId ?? trace.fromAgent ?? c.fromAgent;
  const to = c.targetAgentId ?? trace.toAgent ?? c.toAgent;
  return typeof from === "string" && typeof to === "string" ? ` ${from}→${to}` : "";
}

/**
 * The demo's live timeline: one line per state transition of every statechart (time, actor,
 * `from → to`, the event that caused it), fed by XState inspection, plus the runtime's A2A events.
 */
export class Timeline {
  private readonly watched = new Map<string, Watched>();
  /** Root actors stored before this process started: their first snapshot is a resumption. */
  private readonly stored = new Set<string>();
  transitions = 0;

  constructor(
    private readonly elapsed: () => number,
    private readonly print: (line: string) => void,
    /** Put before every actor's name, e.g. which process it lives in. */
    private readonly tag = "",
  ) {}

  readonly inspect = (event: InspectionEvent): void => {
    if (event.type === "@xstate.actor") {
      const actor = event.actorRef as unknown as InspectedActor;
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
      return;
    }
    if (event.type !== "@xstate.snapshot") return;
    const watched = this.watched.get(event.actorRef.sessionId);
    if (watched === undefined) return;
    const snapshot = event.snapshot as { value?: unknown; context?: unknown; status?: string };
    const state = stateName(snapshot.value);
    if (watched.state === state) return;
    if (watched.parties === undefined && watched.parent === undefined) {
      watched.parties = partiesOf(snapshot.context);
    }
    const from = watched.state ?? (watched.resumed ? "(resumed)" : "(start)");
    watched.state = state;
    this.transitions += 1;
    this.line(this.labelOf(watched), `${from} → ${state}`, event.event.type);
  };

  private labelOf(w: Watched): string {
    const parent = w.parent === undefined ? undefined : this.watched.get(w.parent);
    if (parent !== undefined) return `${this.labelOf(parent)} › ${w.machineId}`;
    // A child can change state before its parent's first snapshot is seen: read the parent's context.
    w.parties ??= partiesOf((w.ref.getSnapshot?.() as { context?: unknown } | undefined)?.context);
    return `${this.tag}${w.machineId}${w.parties}`;
  }

  readonly onA2AEvent = (e: A2AEvent): void => {
    const detail = describeEvent(e);
    if (detail !== undefined) this.line("event", e.type, detail);
  };

  /**
   * Actors (root ids) that were stored before this process started: the runtime may resume them at
   * start or later (a waiting collaboration is hosted on its first event), either way "(resumed)".
   */
  expectResumed(ids: Iterable<string>): void {
    for (const id of ids) this.stored.add(id);
  }

  /** A line another process's timeline printed, as it was. */
  echo(line: string): void {
    this.print(line);
  }

  note(text: string): void {
    this.print(`  ${demoStamp(this.elapsed())}  ${text}`);
  }

  private line(actor: string, change: string, cause: string): void {
    this.print(`  ${demoStamp(this.elapsed())}  ${actor.padEnd(38)} ${change.padEnd(40)} ${cause}`);
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
