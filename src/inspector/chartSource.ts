// Rewrites of a toMermaid chart's source that only change how the inspector draws it: same states, same ids.

/** A line of a toMermaid chart with every state id prefixed (`[*]`, labels and `--`/`}` lines left as they are). */
export function prefixLine(line: string, prefix: string): string {
  const id = (raw: string): string => (raw === "[*]" ? raw : prefix + raw);
  let m = /^(\s*)state (".*") as (\S+)( \{)?$/.exec(line);
  if (m) return `${m[1]}state ${m[2]} as ${id(m[3] ?? "")}${m[4] ?? ""}`;
  m = /^(\s*)(\S+) --> (\S+)(.*)$/.exec(line);
  if (m) return `${m[1]}${id(m[2] ?? "")} --> ${id(m[3] ?? "")}${m[4] ?? ""}`;
  m = /^(\s*)(\S+) : (.*)$/.exec(line);
  if (m) return `${m[1]}${id(m[2] ?? "")} : ${m[3] ?? ""}`;
  return line;
}

/** The id of the node root transitions are drawn from, and its label. */
export const ANY_STATE_ID = "any_state__";

/**
 * A transition of the machine itself (its root `on`), which toMermaid draws from every state that can
 * take it, becomes one edge from an "any state" node: otherwise a dozen labels pile up at the target.
 * `rootLabels` are those transitions' edge labels (`event [guard]`).
 */
export function collapseShared(source: string, rootLabels: ReadonlySet<string>): string {
  const lines = source.split("\n");
  const groups = new Map<string, number[]>();
  lines.forEach((line, i) => {
    const m = /^ {2}(\S+) --> (\S+) : (.*)$/.exec(line);
    if (!m || m[1] === "[*]" || m[1] === m[2] || !rootLabels.has(m[3] ?? "")) return;
    const key = `${m[2]} : ${m[3]}`;
    groups.set(key, [...(groups.get(key) ?? []), i]);
  });
  const drop = new Set<number>();
  const replace = new Map<number, string[]>();
  let declared = false;
  for (const [edge, at] of groups) {
    if (at.length < 2) continue;
    const first = at[0] ?? 0;
    replace.set(first, [
      ...(declared ? [] : [`  state "any state" as ${ANY_STATE_ID}`]),
      `  ${ANY_STATE_ID} --> ${edge}`,
    ]);
    declared = true;
    for (const i of at) drop.add(i);
  }
  if (drop.size === 0) return source;
  return lines.flatMap((line, i) => replace.get(i) ?? (drop.has(i) ? [] : [line])).join("\n");
}

/**
 * One edge per pair of states, its labels a line each: Mermaid lays parallel edges' labels on top of
 * each other (a state with several guarded `always` transitions to one target would be unreadable).
 */
export function mergeParallelEdges(source: string): string {
  const lines = source.split("\n");
  const first = new Map<string, number>();
  const out: string[] = [];
  for (const line of lines) {
    const m = /^(\s*)(\S+) --> (\S+) : (.*)$/.exec(line);
    const key = m ? `${m[1]}${m[2]} --> ${m[3]}` : undefined;
    const at = key === undefined ? undefined : first.get(key);
    if (m && at !== undefined) out[at] = `${out[at]}<br/>${m[4]}`;
    else {
      if (key !== undefined) first.set(key, out.length);
      out.push(line);
    }
  }
  return out.join("\n");
}
