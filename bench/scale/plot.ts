// The growth plot of the scale benchmark (docs/scale.svg): one small panel per measure, log-log, the
// measured points joined, and a dashed line through the smallest size's point growing as the work
// does (∝ live collaborations): a measure whose line stays under the dashed one grows no faster than
// the work. Hand-written SVG: a dozen lines and circles need no chart library (and no dependency the
// package does not already have).

export interface Panel {
  title: string;
  /** What `values` are in, after a space: " ms", " B", " MB" (labels step up to s, KB, GB); else a count's. */
  unit: string;
  /** One value per size; NaN or ≤ 0 is left out (a log axis has no zero). */
  values: number[];
}

const W = 250;
const H = 170;
const PAD = { left: 46, right: 12, top: 26, bottom: 30 };
const COLUMNS = 3;

const esc = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
/** A count (the x axis): 1k, 10k, 100k. */
const short = (value: number) =>
  value >= 1e9
    ? `${+(value / 1e9).toPrecision(3)}G`
    : value >= 1e6
      ? `${+(value / 1e6).toPrecision(3)}M`
      : value >= 1e3
        ? `${+(value / 1e3).toPrecision(3)}k`
        : `${+value.toPrecision(3)}`;

/**
 * Units a measure steps up through, each `step` times the one before. Bytes step by 1024: the benchmark's
 * MB is 1024² bytes (and its targets' GB 1024 MB).
 */
const LADDERS = [
  { units: ["B", "KB", "MB", "GB", "TB"], step: 1024 },
  { units: ["ms", "s"], step: 1000 },
];

const grouped = (value: number) => String(Math.round(value)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/**
 * A point's label: three significant digits in the largest unit that keeps the number under 1,000
 * (`874 ms`, `5.27 s`, `1.89 GB`, `26.1 KB`); past the last unit, whole and grouped (`1,234 s`). A unit
 * outside the ladders (a count) gets k/M/G. `unit` may start with the space that separates it.
 */
export function valueLabel(value: number, unit: string): string {
  const space = /^\s*/.exec(unit)?.[0] ?? "";
  const ladder = LADDERS.find((l) => l.units.includes(unit.trim()));
  if (ladder === undefined) return `${short(value)}${unit}`;
  let at = ladder.units.indexOf(unit.trim());
  let v = value;
  while (at < ladder.units.length - 1 && +v.toPrecision(3) >= 1000) {
    v /= ladder.step;
    at += 1;
  }
  const text = v >= 1000 ? grouped(v) : `${+v.toPrecision(3)}`;
  return `${text}${space}${ladder.units[at] ?? ""}`;
}

function panel(p: Panel, sizes: number[], x0: number, y0: number): string {
  const points = sizes
    .map((size, i) => ({ size, value: p.values[i] ?? Number.NaN }))
    .filter((pt) => Number.isFinite(pt.value) && pt.value > 0);
  const first = points[0];
  const out = [
    `<g transform="translate(${x0},${y0})">`,
    `<text x="${PAD.left}" y="16" class="t">${esc(p.title)}</text>`,
  ];
  if (first === undefined) return [...out, "</g>"].join("");
  const ref = points.map((pt) => first.value * (pt.size / first.size));
  const ys = [...points.map((pt) => pt.value), ...ref];
  const [lo, hi] = [Math.log10(Math.min(...ys)) - 0.1, Math.log10(Math.max(...ys)) + 0.1];
  const [xlo, xhi] = [Math.log10(Math.min(...sizes)) - 0.15, Math.log10(Math.max(...sizes)) + 0.15];
  const px = (size: number) =>
    PAD.left + ((Math.log10(size) - xlo) / (xhi - xlo)) * (W - PAD.left - PAD.right);
  const py = (value: number) =>
    H - PAD.bottom - ((Math.log10(value) - lo) / (hi - lo || 1)) * (H - PAD.top - PAD.bottom);
  const path = (pts: Array<[number, number]>) =>
    pts.map(([x, y], i) => `${i === 0 ? "M" : "L"}${x.toFixed(1)},${y.toFixed(1)}`).join("");
  out.push(
    `<rect x="${PAD.left}" y="${PAD.top}" width="${W - PAD.left - PAD.right}" height="${H - PAD.top - PAD.bottom}" class="f"/>`,
    `<path d="${path(points.map((pt, i) => [px(pt.size), py(ref[i] ?? pt.value)]))}" class="r"/>`,
    `<path d="${path(points.map((pt) => [px(pt.size), py(pt.value)]))}" class="m"/>`,
  );
  for (const pt of points) {
    out.push(
      `<circle cx="${px(pt.size).toFixed(1)}" cy="${py(pt.value).toFixed(1)}" r="3" class="d"/>`,
      `<text x="${px(pt.size).toFixed(1)}" y="${(py(pt.value) - 6).toFixed(1)}" class="v">${esc(valueLabel(pt.value, p.unit))}</text>`,
    );
  }
  for (const size of sizes)
    out.push(`<text x="${px(size).toFixed(1)}" y="${H - PAD.bottom + 14}" class="x">${short(size)}</text>`);
  out.push("</g>");
  return out.join("");
}

/** An SVG of the panels, three to a row; x: live collaborations (log), y: the measure (log). */
export function growthSvg(title: string, sizes: number[], panels: Panel[]): string {
  const rows = Math.ceil(panels.length / COLUMNS);
  const width = COLUMNS * W;
  const height = rows * H + 56;
  const body = panels.map((p, i) => panel(p, sizes, (i % COLUMNS) * W, 40 + Math.floor(i / COLUMNS) * H));
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">`,
    "<style>.t{font-size:12px;font-weight:bold}.v{font-size:9px;text-anchor:middle}.x{font-size:9px;text-anchor:middle;fill:#555}" +
      ".f{fill:#fafafa;stroke:#ccc}.r{fill:none;stroke:#999;stroke-dasharray:4 3}.m{fill:none;stroke:#1f6fb2;stroke-width:2}.d{fill:#1f6fb2}</style>",
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="10" y="20" font-size="14">${esc(title)}</text>`,
    `<text x="10" y="34" font-size="10" fill="#555">x: live collaborations (log); y: the measure (log); dashed: growing as the work does (∝ live), through the first point</text>`,
    ...body,
    "</svg>",
  ].join("\n");
}
