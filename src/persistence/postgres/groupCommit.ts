import { ActorTakenOverError, type RecordForPut } from "../actorRecord.js";

interface Waiting {
  puts: RecordForPut[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Puts go one statement at a time, in order (two in flight could commit out of order, an older state
 * overwriting a newer); those made meanwhile go together as the next. A merged put refused for
 * ownership goes again caller by caller, so one caller's refused records never fail another's.
 */
export class GroupCommit {
  private waiting: Waiting[] = [];
  private writing = false;

  constructor(private readonly write: (puts: RecordForPut[]) => Promise<void>) {}

  put(puts: RecordForPut[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ puts, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    while (this.waiting.length > 0) {
      const group = this.waiting;
      this.waiting = [];
      await this.commit(group);
    }
    this.writing = false;
  }

  private async commit(group: Waiting[]): Promise<void> {
    try {
      await this.write(merged(group));
      for (const one of group) one.resolve();
    } catch (error) {
      if (!(error instanceof ActorTakenOverError) || group.length === 1) {
        for (const one of group) one.reject(error);
        return;
      }
      for (const one of group) await this.write(merged([one])).then(one.resolve, one.reject);
    }
  }
}

/** The records of the group as one batch; of an actor put twice, the later record. */
function merged(group: readonly Waiting[]): RecordForPut[] {
  const byId = new Map<string, RecordForPut>();
  for (const { puts } of group) for (const put of puts) byId.set(put.record.id, put);
  return [...byId.values()];
}
