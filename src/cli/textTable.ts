// Plain-text tables for the CLI's reports.

/** Left-aligned columns two spaces apart; the last column is not padded. */
export function alignColumns(rows: string[][]): string[] {
  const widths = columnWidths(rows);
  return rows.map((row) => alignRow(row, widths));
}

/** `alignColumns` for a table too long to hold (a million actors): `rows` is called twice, to measure, then to write. */
export function* alignedLines(rows: () => Iterable<string[]>): Generator<string> {
  const widths = columnWidths(rows());
  for (const row of rows()) yield `${alignRow(row, widths)}\n`;
}

function columnWidths(rows: Iterable<string[]>): number[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return widths;
}

function alignRow(row: string[], widths: number[]): string {
  return row
    .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
    .join("  ")
    .trimEnd();
}

/** A duration in its two largest units, trailing zero units dropped: `4m 10s`, `1m`, `2h 5m`, `3d 1h`, `0s`. */
export function formatDuration(ms: number): string {
  const units: Array<[string, number]> = [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1_000],
  ];
  let rest = Math.max(0, Math.floor(ms / 1_000) * 1_000);
  const parts: string[] = [];
  for (const [name, size] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (parts.length > 0 || n > 0) parts.push(`${n}${name}`);
    if (parts.length === 2) break;
  }
  const shown = parts.filter((part, i) => i === 0 || !/^0/.test(part));
  return shown.length === 0 ? "0s" : shown.join(" ");
}
