import { Heap } from "heap-js";
import { GLOBAL_TIMERS, MAX_TIMER_MS, type RuntimeTimers } from "./timers.js";

interface HeapEntry {
  actorId: string;
  dueAt: number;
  /** Counts the times set, in order: an entry set before start() may be of its backlog. */
  generation: number;
}

/**
 * Wakes per turn while the backlog start() found lasts. After an outage thousands are overdue: woken in
 * one turn, their writes and side effects all waited for the last of them, as a journal append moves
 * one step per event-loop turn. In turns of 64 the first effects run at once. Each turn waits for the
 * I/O that waits to be polled, and for what the queue's owner waits for after the turn two before it
 * (a host: that turn's writes have landed): two turns are in flight, a turn's wakes overlapping the
 * writes of the one before. Turns that waited for I/O alone woke ~1,000 of 10,000 overdue actors before
 * the first of them were written, and held them all.
 */
export const BACKLOG_FIRES_PER_TURN = 64;

/**
 * Wakes per turn of the times that come due while running, in turns as the backlog's. A worker
 * overloaded at 100,000 workflows (1 core) found thousands due at each timer turn: woken all at once,
 * 40,000 actors were hosted waiting for their writes (a 2.5 GB heap, a third of its CPU in scavenges).
 * In turns of 64 they starved behind the creates (lateness p99 34 s, was 12–17 s); in turns of 1,024
 * the heap peaked at 0.9 GB and lateness stayed as it was. Under load that fits a core, fewer are due
 * at once and all fire in one turn.
 */
export const OVERDUE_FIRES_PER_TURN = 1_024;

/**
 * When each dormant actor wakes: a min-heap with one `setTimeout` for the earliest. A replaced time
 * leaves a stale entry, skipped when it surfaces: it is no longer its actor's live entry. The times
 * already past at start() fire in due order, BACKLOG_FIRES_PER_TURN a turn; those due later,
 * OVERDUE_FIRES_PER_TURN a turn.
 */
export class TimerQueue {
  private heap = new Heap<HeapEntry>((a, b) => a.dueAt - b.dueAt);
  /** Each actor's entry in the heap that holds its wake time now. */
  private readonly live = new Map<string, HeapEntry>();
  private nextGeneration = 0;
  private handle: unknown;
  /** The backlog's next turn, queued behind what `turnDone` waits for; stop() makes it a no-op. */
  private nextTurn: { cancelled: boolean } | undefined;
  /**
   * What the backlog turn before this one waits for: the next turn waits for it. Two turns are in
   * flight, so a turn's wakes overlap the writes of the one before.
   */
  private turnBefore: Promise<void> = Promise.resolve();
  private armedFor: number | undefined;
  private running = false;
  /** The backlog start() found: entries set before it (up to this generation) and due by then. */
  private backlog = { generation: 0, dueBy: Number.NEGATIVE_INFINITY };

  constructor(
    private readonly now: () => number,
    private readonly fire: (actorId: string) => void,
    private readonly timers: RuntimeTimers = GLOBAL_TIMERS,
    /** Asked after each backlog turn, once I/O was polled: the turn after next waits for it (never rejects). */
    private readonly turnDone: () => Promise<void> = () => Promise.resolve(),
  ) {}

  /** Sets when the actor wakes; undefined cancels it. */
  set(actorId: string, dueAt: number | undefined): void {
    if (this.live.get(actorId)?.dueAt === dueAt) return;
    if (dueAt === undefined) this.live.delete(actorId);
    else {
      const entry = { actorId, dueAt, generation: ++this.nextGeneration };
      this.live.set(actorId, entry);
      this.heap.push(entry);
    }
    this.compactIfStale();
    this.arm();
  }

  get size(): number {
    return this.live.size;
  }

  /** Starts firing: every overdue time fires now (once), the rest when they are due. */
  start(): void {
    this.running = true;
    this.backlog = { generation: this.nextGeneration, dueBy: this.now() };
    this.arm();
  }

  stop(): void {
    this.running = false;
    if (this.handle !== undefined) this.timers.clearTimeout(this.handle);
    if (this.nextTurn !== undefined) this.nextTurn.cancelled = true;
    this.handle = undefined;
    this.nextTurn = undefined;
    this.turnBefore = Promise.resolve();
    this.armedFor = undefined;
  }

  private arm(): void {
    if (!this.running || this.nextTurn !== undefined) return;
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
    this.handle = this.timers.setTimeout(() => this.fireDue(true), delay);
  }

  /**
   * Wakes the actors due by now without waiting for the `setTimeout` (fake timers hold it), then arms
   * for the next (at once when more are due). `spread` (a timer turn): only this turn's share.
   */
  fireDue(spread = false): void {
    if (!this.running) return;
    if (this.handle !== undefined) this.timers.clearTimeout(this.handle);
    this.handle = undefined;
    this.armedFor = undefined;
    const now = this.now();
    const { backlog } = this;
    let fired = 0;
    for (let next = this.peekLive(); next !== undefined && next.dueAt <= now; next = this.peekLive()) {
      const ofBacklog = next.generation <= backlog.generation && next.dueAt <= backlog.dueBy;
      if (spread && fired >= (ofBacklog ? BACKLOG_FIRES_PER_TURN : OVERDUE_FIRES_PER_TURN)) {
        const turn = { cancelled: false };
        this.nextTurn = turn;
        const before = this.turnBefore;
        const polled = polledIo();
        // Asked once this turn's microtasks ran: a woken actor's overdue delay, so its write, comes in one.
        this.turnBefore = polled.then(() => this.turnDone());
        void Promise.all([before, polled]).then(() => {
          if (turn.cancelled) return;
          this.nextTurn = undefined;
          this.fireDue(true);
        });
        return;
      }
      this.heap.pop();
      // Settled before the actor wakes: a wake-up is owed once.
      this.live.delete(next.actorId);
      fired += 1;
      this.fire(next.actorId);
    }
    this.arm();
  }

  private peekLive(): HeapEntry | undefined {
    for (let top = this.heap.peek(); top !== undefined; top = this.heap.peek()) {
      if (this.live.get(top.actorId) === top) return top;
      this.heap.pop();
    }
    return undefined;
  }

  // Stale entries are dropped when more than half of the heap is stale, keeping memory proportional.
  private compactIfStale(): void {
    if (this.heap.length < 64 || this.heap.length < 2 * this.size) return;
    const live = this.heap.toArray().filter((t) => this.live.get(t.actorId) === t);
    this.heap = new Heap<HeapEntry>((a, b) => a.dueAt - b.dueAt);
    this.heap.init(live);
  }
}

/**
 * Not a timer: in a host, turns queued with setTimeout ran one after another before any I/O (measured,
 * 10,000 overdue); setImmediate runs after the event loop polls for I/O.
 */
const polledIo = () => new Promise<void>((resolve) => setImmediate(resolve));
