import type { QuarantinedFile } from "../persistence/index.js";

/** A file the runtime set aside (also listed in `warnings`): its data is not loaded. */
export interface QuarantinedRow extends QuarantinedFile {
  modifiedIso: string;
}

/** The row `status` prints for a quarantined file: its time also as an ISO string. */
export function toQuarantinedRow(q: QuarantinedFile): QuarantinedRow {
  return { ...q, modifiedIso: new Date(q.modifiedAt).toISOString() };
}

/** Loud on purpose: a quarantined file may hold acknowledged data the runtime no longer has. */
export function quarantineWarning(q: QuarantinedRow): { file: string; problem: string } {
  return {
    file: q.file,
    problem:
      `quarantined (${formatBytes(q.bytes)}, set aside ${q.modifiedIso}): the runtime does not load ` +
      "it and may have lost what it held; inspect it, then move or delete it",
  };
}

/** Bytes in the largest binary unit that keeps a number ≥ 1: `512 B`, `1.5 KiB`, `3.2 MiB`. */
export function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit] ?? ""}`;
}
