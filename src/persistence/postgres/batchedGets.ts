interface Caller<T> {
  resolve: (found: T | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * Reads by id, one statement at a time; those asked for meanwhile go together as the next. A spawn
 * asks whether its id was ever used, and 500 spawns in flight each waited for a round trip of their
 * own on a pool of a few connections. No timer: a lone read goes at once, and fake timers hold none.
 */
export class BatchedGets<T> {
  private waiting = new Map<string, Array<Caller<T>>>();
  private reading = false;

  constructor(private readonly read: (ids: string[]) => Promise<Map<string, T>>) {}

  get(id: string): Promise<T | undefined> {
    return new Promise((resolve, reject) => {
      const callers = this.waiting.get(id);
      if (callers === undefined) this.waiting.set(id, [{ resolve, reject }]);
      else callers.push({ resolve, reject });
      if (!this.reading) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.reading = true;
    while (this.waiting.size > 0) {
      const batch = this.waiting;
      this.waiting = new Map();
      try {
        const found = await this.read([...batch.keys()]);
        for (const [id, callers] of batch) for (const { resolve } of callers) resolve(found.get(id));
      } catch (error) {
        for (const callers of batch.values()) for (const { reject } of callers) reject(error);
      }
    }
    this.reading = false;
  }
}
