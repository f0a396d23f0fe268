// Small SVG charts for the stats page, drawn here so the page needs no script and no library:
// stacked columns (one column per label, one colour per series) and stacked horizontal bars.

/** One series of a chart: its name in the legend, its CSS colour, and one value per label. */
export interface Series {
  name: string;
  color: string;
  values: readonly number[];
}

export interface ChartInput {
  /** Names the chart for tests and assistive technology (`data-chart`, `aria-label`). */
  id: string;
  title: string;
  labels: readonly string[];
  series: readonly Series[];
  /** Shown instead of the chart when every value is 0. */
  empty: string;
}

const FONT = 12;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Columns over the labels, the series stacked in each; the total above every non-empty column. */
export function columnChart(input: ChartInput, options: { labelEvery?: number } = {}): string {
  const totals = stackTotals(input);
  if (totals === undefined) return emptyChart(input);
  const width = 640;
  const height = 240;
  const left = 36;
  const bottom = 36;
  const top = 20;
  const plotH = height - top - bottom;
  const step = (width - left - 8) / input.labels.length;
  const barW = Math.max(2, step * 0.7);
  const max = niceMax(Math.max(...totals));
  const y = (v: number) => top + plotH - (v / max) * plotH;
  const parts: string[] = [axisY(left, width, y, max)];
  const every = options.labelEvery ?? Math.max(1, Math.ceil(input.labels.length / 8));
  input.labels.forEach((label, i) => {
    const x = left + i * step + (step - barW) / 2;
    let base = 0;
    for (const s of input.series) {
      const v = s.values[i] ?? 0;
      if (v > 0) {
        const h = y(base) - y(base + v);
        parts.push(bar(s, label, v, x, y(base + v), barW, h));
      }
      base += v;
    }
    const total = totals[i] ?? 0;
    if (total > 0) parts.push(text(x + barW / 2, y(total) - 4, String(total), "middle", "total"));
    if (i % every === 0) parts.push(text(x + barW / 2, height - bottom + 16, label, "middle", "tick"));
  });
  return figure(input, width, height, parts);
}

/** One horizontal bar per label, the series stacked left to right, each segment's value inside it. */
export function barChart(input: ChartInput): string {
  const totals = stackTotals(input);
  if (totals === undefined) return emptyChart(input);
  const width = 640;
  const left = 130;
  const rowH = 30;
  const top = 8;
  const height = top + input.labels.length * rowH + 8;
  const max = Math.max(...totals);
  const scale = (width - left - 40) / max;
  const parts: string[] = [];
  input.labels.forEach((label, i) => {
    const y = top + i * rowH;
    parts.push(text(left - 8, y + rowH / 2 + FONT / 3, label, "end", "tick"));
    let x = left;
    for (const s of input.series) {
      const v = s.values[i] ?? 0;
      if (v <= 0) continue;
      const w = v * scale;
      parts.push(bar(s, label, v, x, y + 4, w, rowH - 8));
      if (w >= 18) parts.push(text(x + w / 2, y + rowH / 2 + FONT / 3, String(v), "middle", "inside"));
      x += w;
    }
  });
  return figure(input, width, height, parts);
}

/** Each label's stacked total; undefined when every one is 0 (nothing to draw). */
function stackTotals(input: ChartInput): number[] | undefined {
  const totals = input.labels.map((_, i) => input.series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  return totals.every((t) => t === 0) ? undefined : totals;
}

/** One segment of a bar, its value in `data-value` (for tests) and in a tooltip. */
function bar(
  s: Series,
  label: string,
  value: number,
  x: number,
  y: number,
  width: number,
  height: number,
): string {
  return (
    `<rect class="bar" data-series="${escapeHtml(s.name)}" data-value="${value}" x="${r(x)}" y="${r(y)}" ` +
    `width="${r(width)}" height="${r(height)}" fill="${s.color}"><title>${escapeHtml(`${label}: ${s.name} ${value}`)}</title></rect>`
  );
}

function figure(input: ChartInput, width: number, height: number, parts: string[]): string {
  const legend = input.series
    .map((s) => `<span class="key"><i style="background:${s.color}"></i>${escapeHtml(s.name)}</span>`)
    .join("");
  return (
    `<figure class="chart" data-chart="${escapeHtml(input.id)}"><figcaption>${escapeHtml(input.title)}</figcaption>` +
    `<svg viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeHtml(input.title)}">` +
    `${parts.join("")}</svg><div class="legend">${legend}</div></figure>`
  );
}

function emptyChart(input: ChartInput): string {
  return (
    `<figure class="chart empty" data-chart="${escapeHtml(input.id)}"><figcaption>${escapeHtml(input.title)}</figcaption>` +
    `<p class="none">${escapeHtml(input.empty)}</p></figure>`
  );
}

/** Gridlines at 0, ½ and the top of the scale, with their values. */
function axisY(left: number, width: number, y: (v: number) => number, max: number): string {
  // Counts are whole: a half-way line only where it falls on a whole number.
  return (Number.isInteger(max / 2) ? [0, max / 2, max] : [0, max])
    .map((v) => {
      const at = y(v);
      return `<line class="grid" x1="${left}" x2="${width - 8}" y1="${r(at)}" y2="${r(at)}"/>${text(left - 6, at + FONT / 3, fmt(v), "end", "tick")}`;
    })
    .join("");
}

/** The smallest of 1, 2, 5 × 10ⁿ at or above the value (at least 1), so gridlines fall on round numbers. */
function niceMax(value: number): number {
  const power = 10 ** Math.floor(Math.log10(Math.max(1, value)));
  const steps = [1, 2, 5, 10].map((m) => m * power).filter((step) => step >= value);
  return Math.max(2, steps[0] ?? value);
}

function text(x: number, y: number, content: string, anchor: "middle" | "end", cls: string): string {
  return `<text class="${cls}" x="${r(x)}" y="${r(y)}" text-anchor="${anchor}">${escapeHtml(content)}</text>`;
}

function fmt(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}

function r(n: number): string {
  return String(Math.round(n * 10) / 10);
}
