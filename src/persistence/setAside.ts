import { basename } from "node:path";
import { type CorruptStateFileError, errorText } from "./DurableJsonFile.js";
import type { JournalDamage } from "./journal/segmentFormat.js";
import { keepInQuarantine, quarantineFile, quarantineStamp } from "./quarantine.js";
import type { SnapshotStoreOpenReport } from "./snapshotStoreOptions.js";
import { StateDirNotWritableError } from "./StateDirLock.js";

/** A stored record that cannot be used, and where it was read. */
export interface QuarantinedRecord {
  file: string;
  key: string;
  problem: string;
  record: unknown;
}

/**
 * What a store's open() sets aside: each kept durably where it can be recovered, written into the
 * open report and warned of.
 */
export class SetAside {
  constructor(
    private readonly o: {
      dir: string;
      now: () => number;
      warn: (message: string) => void;
      report: SnapshotStoreOpenReport;
    },
  ) {}

  /** A file that cannot be used, moved aside to `<file>.corrupt-<time>`. */
  async file(error: CorruptStateFileError): Promise<void> {
    const movedTo = await quarantineFile(error.file, this.o.now()).catch((cause: unknown) => {
      const problem = `${error.message}, and it could not be moved aside: ${errorText(cause)}`;
      throw new Error(`snapshot store: ${problem}`, { cause });
    });
    this.o.report.quarantinedFiles.push({ file: error.file, movedTo, problem: error.reason });
    this.o.warn(`snapshot store: ${error.message}; moved it to ${movedTo} and started without it`);
  }

  /** A journal segment that lost acknowledged records: a copy kept in `quarantine/`, reported loudly. */
  async damagedJournal(file: string, bytes: Buffer, damage: JournalDamage): Promise<void> {
    const name = `${basename(file)}.damaged-${quarantineStamp(this.o.now())}`;
    const { path: keptAt } = await keepInQuarantine(this.o.dir, name, "", bytes).catch((cause: unknown) => {
      throw new Error(
        `snapshot store: ${damage.kind} journal ${file} (${damage.problem}), and a copy could not be kept: ${errorText(cause)}`,
        { cause },
      );
    });
    this.o.report.damagedJournals.push({ file, keptAt, ...damage });
    this.o.warn(
      `snapshot store: ACKNOWLEDGED RECORDS MAY BE LOST: ${damage.kind} journal ${file}: ${damage.problem}; ` +
        `kept a copy at ${keptAt} and loaded every record it still holds`,
    );
  }

  /**
   * Unusable records kept in `quarantine/records-<time>.json`, durably, before their files are
   * rewritten; resolves the bytes written.
   */
  async records(entries: readonly QuarantinedRecord[]): Promise<number> {
    const now = this.o.now();
    const text = JSON.stringify({ version: 1, quarantinedAt: new Date(now).toISOString(), records: entries });
    const name = `records-${quarantineStamp(now)}`;
    const { path, bytes } = await keepInQuarantine(this.o.dir, name, ".json", text).catch(
      (error: unknown) => {
        throw new StateDirNotWritableError(this.o.dir, error);
      },
    );
    this.o.report.recordQuarantineFile = path;
    for (const entry of entries) {
      this.o.report.quarantinedRecords.push({ id: entry.key, file: entry.file, problem: entry.problem });
      this.o.warn(
        `snapshot store: record ${JSON.stringify(entry.key)} of ${entry.file} was quarantined to ${path}: ${entry.problem}`,
      );
    }
    return bytes;
  }
}
