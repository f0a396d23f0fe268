/** Live collaborations by the thread they await an answer in: an inbound message touches only those. */
export class AwaitingAnswers {
  private readonly byThread = new Map<string, Set<string>>();

  add(threadId: string, collaborationId: string): void {
    this.byThread.set(threadId, (this.byThread.get(threadId) ?? new Set<string>()).add(collaborationId));
  }

  remove(threadId: string, collaborationId: string): void {
    const waiting = this.byThread.get(threadId);
    if (waiting === undefined) return;
    waiting.delete(collaborationId);
    if (waiting.size === 0) this.byThread.delete(threadId);
  }

  /** Whether a live collaboration awaits an answer in the thread (its parent is then kept). */
  has(threadId: string): boolean {
    return this.byThread.has(threadId);
  }

  /** The collaborations awaiting an answer in the thread, as a copy (telling them may change the set). */
  in(threadId: string): string[] {
    return [...(this.byThread.get(threadId) ?? [])];
  }
}
