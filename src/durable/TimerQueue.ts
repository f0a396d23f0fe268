import { Heap } from "heap-js";
import { GLOBAL_TIMERS, MAX_TIMER_MS, type RuntimeTimers } from "./timers.js";

interface HeapEntry {
  actorId: string;
  dueAt: number;
  generation: number;
}

/**
 * When each dormant actor wakes: a min-heap with one `setTimeout` for the earliest. A replaced time
 * leaves a stale entry, skipped by its generation when it surfaces.
 */
export class TimerQueue {
  private heap = new Heap<HeapEntry>((a, b) => a.dueAt - b.dueAt);
  private readonly generations = new Map<string, number>();
  private readonly current = new Map<string, number>();
  private nextGeneration = 0;
  private handle: unknown;
  private armedFor: number | undefined;
  private running = false;

  constructor(
    private readonly now: () => number,
    private readonly fire: (actorId: string) => void,
    private readonly timers: RuntimeTimers = GLOBAL_TIMERS,
  ) {}

  /** Sets when the actor wakes; undefined cancels it. */
  set(actorId: string, dueAt: number | undefined): void {
    if (this.current.get(actorId) === dueAt) return;
    if (dueAt === undefined) {
      this.current.delete(actorId);
      this.generations.delete(actorId);
    } else {
      const generation = ++this.nextGeneration;
      this.current.set(actorId, dueAt);
      this.generations.set(actorId, generation);
      this.heap.push({ actorId, dueAt, generation });
    }
    this.compactIfStale();
    this.arm();
  }

  get size(): number {
    return this.current.size;
  }

  /** Starts firing: every overdue time fires now (once), the rest when they are due. */
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

  /** Wakes every actor due by now without its `setTimeout` (fake timers hold it), then arms for the next. */
  fireDue(): void {
    if (!this.running) return;
    if (this.handle !== undefined) this.timers.clearTimeout(this.handle);
    this.handle = undefined;
    this.armedFor = undefined;
    const now = this.now();
    for (let next = this.peekLive(); next !== undefined && next.dueAt <= now; next = this.peekLive()) {
      this.heap.pop();
      // Settled before the actor wakes: a wake-up is owed once.
      this.current.delete(next.actorId);
      this.generations.delete(next.actorId);
      this.fire(next.actorId);
    }
    this.arm();
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
