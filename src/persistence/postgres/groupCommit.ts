import { type ActorRecord, ActorTakenOverError } from "../actorRecord.js";

interface Waiting {
  records: ActorRecord[];
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

  constructor(private readonly write: (records: ActorRecord[]) => Promise<void>) {}

  put(records: ActorRecord[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ records, resolve, reject });
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
function merged(group: readonly Waiting[]): ActorRecord[] {
  const byId = new Map<string, ActorRecord>();
  for (const { records } of group) for (const record of records) byId.set(record.id, record);
  return [...byId.values()];
}
