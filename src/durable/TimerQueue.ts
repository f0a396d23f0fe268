import { Heap } from "heap-js";
import { GLOBAL_TIMERS, MAX_TIMER_MS, type RuntimeTimers } from "./timers.js";

/** A timer the runtime owes an actor: send `{ type: event, at }` to the actor at `dueAt`. */
export interface OwedTimer {
  actorId: string;
  event: string;
  dueAt: number;
}

type HeapEntry = OwedTimer & { generation: number };

/**
 * Every durable timer of every actor in one binary min-heap with one `setTimeout` for the earliest,
 * so 10,000 pending reminders cost one timer, not 10,000. Replacing an actor's timers is lazy: stale
 * heap entries are skipped when they surface (a generation number per actor).
 */
export class TimerQueue {
  private heap = new Heap<HeapEntry>((a, b) => a.dueAt - b.dueAt);
  private readonly generations = new Map<string, number>();
  private readonly current = new Map<string, OwedTimer[]>();
  private readonly fired = new Map<string, string>();
  private owed = 0;
  private handle: unknown;
  private armedFor: number | undefined;
  private running = false;

  constructor(
    private readonly now: () => number,
    private readonly fire: (timer: OwedTimer) => void,
    private readonly timers: RuntimeTimers = GLOBAL_TIMERS,
  ) {}

  /** Replaces the actor's timers with `timers` (none cancels them). */
  set(actorId: string, wanted: ReadonlyArray<{ event: string; dueAt: number }>): void {
    // A timer already delivered is never owed again, even if the actor still shows it for a moment.
    const fired = this.fired.get(actorId);
    const timers = fired === undefined ? wanted : wanted.filter((t) => `${t.event}@${t.dueAt}` !== fired);
    const previous = this.current.get(actorId) ?? [];
    if (sameTimers(previous, timers)) return;
    this.owed += timers.length - previous.length;
    const generation = (this.generations.get(actorId) ?? 0) + 1;
    this.generations.set(actorId, generation);
    if (timers.length === 0) {
      this.current.delete(actorId);
      this.generations.delete(actorId);
    } else {
      this.current.set(
        actorId,
        timers.map((t) => ({ actorId, event: t.event, dueAt: t.dueAt })),
      );
      for (const t of timers) this.heap.push({ actorId, event: t.event, dueAt: t.dueAt, generation });
    }
    this.compactIfStale();
    this.arm();
  }

  /** The actor is gone: drop what it was owed and what was delivered to it. */
  forget(actorId: string): void {
    this.set(actorId, []);
    this.fired.delete(actorId);
  }

  /** Timers currently owed, soonest first. */
  pending(): OwedTimer[] {
    return [...this.current.values()].flat().sort((a, b) => a.dueAt - b.dueAt);
  }

  get size(): number {
    return this.owed;
  }

  /** Starts firing: every overdue timer fires now (once), the rest at their due time. */
  start(): void {
    this.running = true;
    this.arm();
  }

  stop(): void {
    this.running = false;
    if (this.handle !== undefined) this.timers.clearTimeout(this.handle);
    this.handle = undefined;
    this.armedFor = undefined;
  }

  private arm(): void {
    if (!this.running) return;
    const next = this.peekLive();
    if (next === undefined) {
      this.stop();
      this.running = true;
      return;
    }
    if (this.armedFor === next.dueAt && this.handle !== undefined) return;
    if (this.handle !== undefined) this.timers.clearTimeout(this.handle);
    this.armedFor = next.dueAt;
    const delay = Math.min(Math.max(0, next.dueAt - this.now()), MAX_TIMER_MS);
    this.handle = this.timers.setTimeout(() => this.fireDue(), delay);
  }

  /**
   * Delivers every timer due by now at once, rather than on its armed `setTimeout` (which fake timers
   * hold until advanced); then arms for the next. Nothing while stopped.
   */
  fireDue(): void {
    if (!this.running) return;
    if (this.handle !== undefined) this.timers.clearTimeout(this.handle);
    this.handle = undefined;
    this.armedFor = undefined;
    const now = this.now();
    for (let next = this.peekLive(); next !== undefined && next.dueAt <= now; next = this.peekLive()) {
      this.heap.pop();
      // The timer is settled before the actor hears of it: the actor's next snapshot says what it owes now.
      this.dropOwed(next);
      this.fire(next);
    }
    this.arm();
  }

  private dropOwed(timer: OwedTimer): void {
    const owed = this.current.get(timer.actorId);
    if (owed === undefined) return;
    const rest = owed.filter((t) => !(t.event === timer.event && t.dueAt === timer.dueAt));
    this.owed -= owed.length - rest.length;
    this.fired.set(timer.actorId, `${timer.event}@${timer.dueAt}`);
    if (rest.length === 0) {
      this.current.delete(timer.actorId);
      this.generations.set(timer.actorId, (this.generations.get(timer.actorId) ?? 0) + 1);
    } else this.current.set(timer.actorId, rest);
  }

  private peekLive(): HeapEntry | undefined {
    for (let top = this.heap.peek(); top !== undefined; top = this.heap.peek()) {
      if (this.generations.get(top.actorId) === top.generation) return top;
      this.heap.pop();
    }
    return undefined;
  }

  // Stale entries are dropped when more than half of the heap is stale, keeping memory proportional.
  private compactIfStale(): void {
    if (this.heap.length < 64 || this.heap.length < 2 * this.size) return;
    const live = this.heap.toArray().filter((t) => this.generations.get(t.actorId) === t.generation);
    this.heap = new Heap<HeapEntry>((a, b) => a.dueAt - b.dueAt);
    this.heap.init(live);
  }
}

function sameTimers(a: readonly OwedTimer[], b: ReadonlyArray<{ event: string; dueAt: number }>): boolean {
  return a.length === b.length && a.every((t, i) => t.event === b[i]?.event && t.dueAt === b[i]?.dueAt);
}
