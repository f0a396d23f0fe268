import { describe, expect, it } from "vitest";
import { growthSvg, valueLabel } from "../../bench/scale/plot.js";

describe("the scale plot's labels", () => {
  it("step milliseconds up to seconds and bytes up to KB, MB and GB (1024 each), three significant digits", () => {
    expect(
      [
        [874, " ms"],
        [5_270, " ms"],
        [87_700, " ms"],
        [999.7, " ms"], // rounds to 1,000 ms: 1 s
        [1_234_567, " ms"], // past the last unit: whole and grouped
        [22.4, " ms"],
        [2_670, " B"],
        [26_700, " B"],
        [168, " MB"],
        [1_940, " MB"],
        [4_560, " MB"],
        [1.16, " MB"],
        [12, "MB"],
      ].map(([value, unit]) => valueLabel(value as number, unit as string)),
    ).toEqual([
      "874 ms",
      "5.27 s",
      "87.7 s",
      "1 s",
      "1,235 s",
      "22.4 ms",
      "2.61 KB",
      "26.1 KB",
      "168 MB",
      "1.89 GB",
      "4.45 GB",
      "1.16 MB",
      "12MB",
    ]);
  });

  it("keeps k/M/G for counts (no known unit), as on the x axis", () => {
    expect(valueLabel(1_940, " transitions")).toBe("1.94k transitions");
  });

  it("labels the points of every panel that way", () => {
    const svg = growthSvg(
      "growth",
      [1_000, 10_000, 100_000],
      [
        { title: "start()", unit: " ms", values: [874, 5_270, 87_700] },
        { title: "peak RSS", unit: " MB", values: [168, 800, 4_560] },
      ],
    );
    const labels = [...svg.matchAll(/class="v">([^<]*)</g)].map((m) => m[1]);
    expect(labels).toEqual(["874 ms", "5.27 s", "87.7 s", "168 MB", "800 MB", "4.45 GB"]);
    expect([...svg.matchAll(/class="x">([^<]*)</g)].map((m) => m[1])).toEqual([
      "1k",
      "10k",
      "100k",
      "1k",
      "10k",
      "100k",
    ]);
  });
});
