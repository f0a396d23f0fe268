import { type AnyStateMachine, type InspectionEvent, StateMachine } from "xstate";
import type {
  ActorStatus,
  ActorView,
  EventView,
  InspectorHello,
  InspectorMessage,
  MachineChart,
} from "./protocol.js";
import { activeStates, machineChart } from "./statechart.js";

/** At most this many actors are kept (finished ones are dropped first), and this many events. */
export const MAX_ACTORS = 500;
/** At most this many events are kept: the latest ones. */
export const MAX_EVENTS = 200;
/** Distinct machines whose charts are kept; charts no kept actor uses are dropped beyond this. */
const MAX_CHARTS = 100;

/** The parts of a running xstate Actor the inspector reads (ActorRefLike types only sessionId). */
interface ActorLike {
  sessionId: string;
  id?: unknown;
  systemId?: unknown;
  _parent?: { sessionId?: unknown };
  logic?: unknown;
}

const TEXT_LIMIT = 80;
/** Room for an event's data as the page shows it when the event is clicked; deeper values are cut anyway. */
export const DATA_LIMIT = 1000;

function text(value: unknown, limit = TEXT_LIMIT): string {
  const s = String(value);
  return s.length > limit ? `${s.slice(0, limit - 1)}…` : s;
}

function isActorRef(value: object): boolean {
  return "sessionId" in value && "send" in value;
}

/** A small, JSON-safe copy of an event field: no functions, actor refs, cycles or depth beyond 2. */
function sanitize(value: unknown, depth: number): unknown {
  if (value === null || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  if (typeof value === "string") return text(value);
  if (typeof value === "bigint") return value.toString();
  if (typeof value !== "object") return undefined;
  if (isActorRef(value)) return `<actor ${text((value as ActorLike).id ?? (value as ActorLike).sessionId)}>`;
  if (depth >= 2) return Array.isArray(value) ? "[…]" : "{…}";
  if (Array.isArray(value)) return value.slice(0, 5).map((item) => sanitize(item, depth + 1) ?? null);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).slice(0, 8)) {
    if (key.startsWith("_") || key === "machine") continue;
    const inner = sanitize((value as Record<string, unknown>)[key], depth + 1);
    if (inner !== undefined) out[key] = inner;
  }
  return out;
}

function preview(event: Record<string, unknown>): string | undefined {
  const { type: _type, ...rest } = event;
  if (Object.keys(rest).length === 0) return undefined;
  try {
    const json = JSON.stringify(sanitize(rest, 0));
    return json === "{}" ? undefined : text(json, DATA_LIMIT);
  } catch {
    return undefined;
  }
}

function statusOf(snapshot: unknown): ActorStatus {
  const status = (snapshot as { status?: unknown } | undefined)?.status;
  return status === "done" || status === "error" || status === "stopped" ? status : "active";
}

/**
 * What the inspector page shows, from xstate inspection events: actors, charts, latest events. Bounded:
 * MAX_ACTORS actors (finished ones dropped first), MAX_EVENTS events. `publish` hears each change.
 */
export class InspectorModel {
  private readonly actors = new Map<string, ActorView>();
  private readonly charts = new Map<string, MachineChart>();
  /** The session each XState actor hosted again is shown under, and the latest such actor of each. */
  private readonly aliases = new Map<string, string>();
  private readonly aliasOf = new Map<string, string>();
  /** The XState actor each shown actor is now, held weakly: the model must not keep stopped ones alive. */
  private readonly refs = new Map<string, WeakRef<object>>();
  private events: EventView[] = [];
  private seq = 0;

  constructor(
    private readonly publish: (message: InspectorMessage) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** The whole current state, for a page that connects now. */
  hello(): InspectorHello {
    return {
      kind: "hello",
      actors: [...this.actors.values()],
      machines: [...this.charts.values()],
      events: [...this.events],
    };
  }

  handle(event: InspectionEvent): void {
    const ref = event.actorRef as unknown as ActorLike;
    if (typeof ref?.sessionId !== "string") return;
    switch (event.type) {
      case "@xstate.actor":
        this.register(ref);
        return;
      case "@xstate.snapshot":
        this.update(this.actors.get(this.sessionOf(ref.sessionId)) ?? this.register(ref), event.snapshot);
        return;
      case "@xstate.event":
        this.record(ref, event.sourceRef as unknown as ActorLike | undefined, event.event);
        return;
      default:
        return;
    }
  }

  private register(ref: ActorLike): ActorView {
    const existing = this.actors.get(this.sessionOf(ref.sessionId));
    if (existing !== undefined) return existing;
    const machine = ref.logic instanceof StateMachine ? (ref.logic as AnyStateMachine) : undefined;
    if (machine !== undefined) this.chart(machine);
    const parentRef = ref._parent?.sessionId;
    const parent = typeof parentRef === "string" ? this.sessionOf(parentRef) : undefined;
    const earlier = this.earlier(text(ref.id ?? ref.sessionId, 200), parent);
    if (earlier !== undefined) return this.alias(ref, earlier);
    this.refs.set(ref.sessionId, new WeakRef(ref));
    const seq = ++this.seq;
    const actor: ActorView = {
      sessionId: ref.sessionId,
      id: text(ref.id ?? ref.sessionId, 200),
      ...(typeof ref.systemId === "string" ? { systemId: text(ref.systemId, 200) } : {}),
      ...(parent === undefined ? {} : { parentSessionId: parent }),
      ...(machine === undefined ? {} : { machineId: machine.id }),
      state: "",
      current: [],
      active: [],
      status: "active",
      seq,
      updatedSeq: seq,
      updatedAt: this.now(),
    };
    this.actors.set(actor.sessionId, actor);
    this.evict();
    this.publish({ kind: "actor", actor });
    return actor;
  }

  private chart(machine: AnyStateMachine): void {
    if (this.charts.has(machine.id)) return;
    const chart = machineChart(machine);
    this.charts.set(chart.machineId, chart);
    if (this.charts.size > MAX_CHARTS) {
      const used = new Set([...this.actors.values()].map((a) => a.machineId));
      for (const id of this.charts.keys()) {
        if (this.charts.size <= MAX_CHARTS) break;
        if (!used.has(id) && id !== chart.machineId) this.charts.delete(id);
      }
    }
    this.publish({ kind: "machine", machine: chart });
  }

  private update(actor: ActorView, snapshot: unknown): void {
    const status = statusOf(snapshot);
    const chart = actor.machineId === undefined ? undefined : this.charts.get(actor.machineId);
    if (actor.machineId !== undefined) {
      const states = activeStates((snapshot as { value?: unknown } | undefined)?.value, chart);
      actor.state = states.label;
      actor.current = states.current;
      actor.active = states.active;
    }
    actor.status = status;
    if (status === "error") actor.error = text((snapshot as { error?: unknown }).error, 200);
    actor.updatedSeq = ++this.seq;
    actor.updatedAt = this.now();
    this.publish({ kind: "actor", actor });
  }

  private record(target: ActorLike, source: ActorLike | undefined, event: { type: string }): void {
    const view: EventView = {
      seq: ++this.seq,
      at: this.now(),
      type: text(event.type, 200),
      targetSessionId: this.sessionOf(target.sessionId),
      targetId: text(target.id ?? target.sessionId, 200),
      ...(typeof source?.sessionId === "string"
        ? {
            sourceSessionId: this.sessionOf(source.sessionId),
            sourceId: text(source.id ?? source.sessionId, 200),
          }
        : {}),
    };
    const data = preview(event as unknown as Record<string, unknown>);
    if (data !== undefined) view.data = data;
    this.events.push(view);
    if (this.events.length > MAX_EVENTS) this.events = this.events.slice(-MAX_EVENTS);
    this.publish({ kind: "event", event: view });
  }

  /**
   * A durable actor hosted again (after a restart, or after it was dormant while it waited) is a new
   * XState actor of the same id: it is shown as the one seen before, under that one's session, once
   * that one no longer runs. Two running actors of one id are two actors.
   */
  private earlier(id: string, parent: string | undefined): ActorView | undefined {
    for (const actor of this.actors.values())
      if (actor.id === id && actor.parentSessionId === parent && !this.running(actor.sessionId)) return actor;
    return undefined;
  }

  /** Whether the XState actor shown under this session still runs. */
  private running(sessionId: string): boolean {
    const actor = this.refs.get(sessionId)?.deref() as
      { getSnapshot?: () => { status?: unknown } } | undefined;
    try {
      return actor?.getSnapshot?.().status === "active";
    } catch {
      return false;
    }
  }

  private alias(ref: ActorLike, view: ActorView): ActorView {
    const previous = this.aliasOf.get(view.sessionId);
    if (previous !== undefined) this.aliases.delete(previous);
    this.aliases.set(ref.sessionId, view.sessionId);
    this.aliasOf.set(view.sessionId, ref.sessionId);
    this.refs.set(view.sessionId, new WeakRef(ref));
    return view;
  }

  /** The session an actor is shown under. */
  private sessionOf(sessionId: string): string {
    return this.aliases.get(sessionId) ?? sessionId;
  }

  /** Over MAX_ACTORS: drop the least recently updated finished actors, then the least recently updated others. */
  private evict(): void {
    const over = this.actors.size - MAX_ACTORS;
    if (over <= 0) return;
    const byAge = [...this.actors.values()].sort((a, b) => a.updatedSeq - b.updatedSeq);
    const finished = byAge.filter((a) => a.status !== "active");
    const live = byAge.filter((a) => a.status === "active");
    const dropped = [...finished, ...live].slice(0, over).map((a) => a.sessionId);
    for (const id of dropped) {
      this.actors.delete(id);
      this.refs.delete(id);
      const alias = this.aliasOf.get(id);
      this.aliasOf.delete(id);
      if (alias !== undefined) this.aliases.delete(alias);
    }
    this.publish({ kind: "drop", sessionIds: dropped });
  }
}
