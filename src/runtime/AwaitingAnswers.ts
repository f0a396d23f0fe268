/** Live collaborations by the thread they await an answer in: an inbound message touches only those. */
export class AwaitingAnswers {
  /**
   * A thread's collaboration by its id, or several in a Set: nearly every thread has one, and a start
   * adds every live one (a Set each took ~1 µs and ~200 bytes more at 100,000).
   */
  private readonly byThread = new Map<string, string | Set<string>>();

  add(threadId: string, collaborationId: string): void {
    const waiting = this.byThread.get(threadId);
    if (waiting === undefined) this.byThread.set(threadId, collaborationId);
    else if (typeof waiting !== "string") waiting.add(collaborationId);
    else if (waiting !== collaborationId) this.byThread.set(threadId, new Set([waiting, collaborationId]));
  }

  remove(threadId: string, collaborationId: string): void {
    const waiting = this.byThread.get(threadId);
    if (waiting === collaborationId) this.byThread.delete(threadId);
    if (typeof waiting === "string" || waiting === undefined) return;
    waiting.delete(collaborationId);
    if (waiting.size === 0) this.byThread.delete(threadId);
  }

  /** Whether a live collaboration awaits an answer in the thread (its parent is then kept). */
  has(threadId: string): boolean {
    return this.byThread.has(threadId);
  }

  /** The collaborations awaiting an answer in the thread, as a copy (telling them may change the set). */
  in(threadId: string): string[] {
    const waiting = this.byThread.get(threadId);
    if (waiting === undefined) return [];
    return typeof waiting === "string" ? [waiting] : [...waiting];
  }
}
