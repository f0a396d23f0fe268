import { type AnyStateMachine, type AnyStateNode, StateMachine } from "xstate";
import { describeTransition, listTransitions, type TransitionInfo } from "./transitions.js";

// Statechart diagrams for the docs pages (statechartDocs.ts) and the inspector, from the machine objects.

/** Words Mermaid's state-diagram lexer reads as keywords: a state with such an id gets a `_` suffix. */
const RESERVED_IDS = new Set([
  "as",
  "accdescr",
  "acctitle",
  "class",
  "classdef",
  "click",
  "default",
  "note",
  "scale",
  "state",
  "style",
]);

const TEXT_ENTITIES: Record<string, string> = {
  "#": "#35;",
  ";": "#59;",
  '"': "#quot;",
  "\r": " ",
  "\n": " ",
};

/** Text Mermaid shows verbatim in a label (`#`, `;` and `"` as its entity codes, one line). */
function mermaidText(text: string): string {
  return text.replace(/[#;"\r\n]/g, (c) => TEXT_ENTITIES[c] ?? c);
}

/**
 * The Mermaid id toMermaid gives the state at `path` (its keys from the root): the path joined with `_`,
 * anything but letters, digits and `_` as `_`, and a `_` suffix for keywords and ids ending `_start`/`_end`.
 */
export function mermaidStateId(path: readonly string[]): string {
  const id = path.join("_").replace(/[^\p{L}\p{N}_]/gu, "_");
  return RESERVED_IDS.has(id.toLowerCase()) || /_(start|end)$/.test(id) ? `${id}_` : id;
}

/** An event type as a reader wants it: `done: agentWait`, `error: agentWait`, `always`, `after 500ms`. */
export function eventLabel(event: string): string {
  const actor = /^xstate\.(done|error)\.actor\.(.+)$/.exec(event);
  if (actor) return `${actor[1]}: ${actor[2]}`;
  const state = /^xstate\.done\.state\.(.+)$/.exec(event);
  if (state) return `done: state ${state[1]}`;
  const after = /^xstate\.after\.([^.]+)\./.exec(event);
  if (after) return `after ${after[1]}${/^\d+$/.test(after[1] ?? "") ? "ms" : ""}`;
  return event;
}

function children(node: AnyStateNode): AnyStateNode[] {
  return Object.values(node.states) as AnyStateNode[];
}

function allNodes(node: AnyStateNode): AnyStateNode[] {
  return [node, ...children(node).flatMap(allNodes)];
}

/** How a transition without a target is drawn: a self-loop marked `(forward)` when it only sends the event on. */
function targetlessMark(node: AnyStateNode, t: TransitionInfo): string {
  const definitions = t.event === "always" ? (node.always ?? []) : (node.transitions.get(t.event) ?? []);
  const definition = definitions.find((d) => describeTransition(d).key === t.key);
  const actions = (definition?.actions ?? []) as unknown[];
  const forwards =
    actions.length > 0 &&
    actions.every((a) => typeof a === "function" && (a as { type?: unknown }).type === "xstate.sendTo");
  return forwards ? "(forward)" : "(actions only)";
}

/** An edge label: `event [guard]`, plus the mark of a transition without a target. */
function edgeLabel(t: TransitionInfo, node: AnyStateNode): string {
  const guard = t.guard === undefined ? "" : ` [${t.guard}]`;
  const mark = t.targets.length === 0 ? ` ${targetlessMark(node, t)}` : "";
  return mermaidText(`${eventLabel(t.event)}${guard}${mark}`);
}

function invokeNames(node: AnyStateNode): string[] {
  return node.invoke.map((i) => {
    const src = typeof i.src === "string" ? i.src : i.id;
    return src === i.id ? i.id : `${i.id} (${src})`;
  });
}

function isLive(node: AnyStateNode): boolean {
  return node.type !== "final" && node.type !== "history";
}

/** A state left at once by an unguarded `always` transition: no event is ever handled in it. */
function isTransient(node: AnyStateNode): boolean {
  return (node.always ?? []).some((t) => t.guard === undefined);
}

/** How the inspector draws a chart for reading; toMermaid (the docs) uses none of them. */
export interface ChartOptions {
  /** A machine an atomic state invokes is drawn inside that state (one level), its ids prefixed `<state id>__`. */
  nestInvoked?: boolean;
  /** A root transition drawn from several states is drawn once, from an "any state" node. */
  anyState?: boolean;
  /** One edge per pair of states, a label line each (toMermaid merges only self-loops, as Mermaid draws one). */
  mergeEdges?: boolean;
}

/** A machine a state invokes, drawn inside that state: its states' ids are its own with `prefix`. */
export interface NestedMermaidChart {
  stateId: string;
  invokeId: string;
  machineId: string;
  prefix: string;
  stateIds: Record<string, string>;
}

/** A drawn chart: the source, each state's Mermaid id by key path (`a.b`), the machines drawn inside states. */
export interface MermaidChart {
  source: string;
  stateIds: Record<string, string>;
  nested: NestedMermaidChart[];
}

/** The id of the node that root transitions are drawn from with `anyState`. */
const ANY_STATE_ID = "any_state__";

/**
 * The machine as a Mermaid `stateDiagram-v2`, in definition order. A root transition is drawn from each
 * live top-level state but the transient ones (they never see the event).
 */
export function toMermaid(machine: AnyStateMachine): string {
  return mermaidChart(machine).source;
}

/** The chart of `machine` drawn with `options`; throws when two states map to one Mermaid id. */
export function mermaidChart(
  machine: AnyStateMachine,
  options: ChartOptions = {},
  prefix = "",
): MermaidChart {
  const nodes = allNodes(machine.root);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const ids = new Map<AnyStateNode, string>();
  for (const node of nodes.slice(1)) {
    const id = prefix + mermaidStateId(node.path);
    const clash = [...ids.entries()].find(([, other]) => other === id);
    if (clash)
      throw new Error(`toMermaid: states ${clash[0].id} and ${node.id} both map to the Mermaid id ${id}`);
    ids.set(node, id);
  }
  const idOf = (node: AnyStateNode): string => ids.get(node) ?? prefix + mermaidStateId(node.path);
  const nodeOf = (stateId: string): AnyStateNode => {
    const node = byId.get(stateId);
    if (node === undefined) throw new Error(`toMermaid: ${machine.id} has no state ${stateId}`);
    return node;
  };
  const anyId = prefix + ANY_STATE_ID;
  const anyState = options.anyState === true && ![...ids.values()].includes(anyId);
  const transitions = listTransitions(machine);
  const nested: NestedMermaidChart[] = [];
  const taken = new Set(ids.values());

  /** The edges drawn in `parent`'s block: transitions of its children, root ones in the top block. */
  const edges = (parent: AnyStateNode): Map<string, { from: string; to: string; labels: string[] }> => {
    const groups = new Map<string, { from: string; to: string; labels: string[] }>();
    for (const t of transitions) {
      const source = nodeOf(t.source);
      const label = edgeLabel(t, source);
      const froms =
        source === machine.root
          ? parent === machine.root
            ? children(machine.root).filter((node) => isLive(node) && !isTransient(node))
            : []
          : source.parent === parent
            ? [source]
            : [];
      const pairs = (t.targets.length ? t.targets.map(nodeOf) : [undefined]).flatMap((target) => {
        const others = froms.filter((from) => from !== target);
        const collapse = anyState && source === machine.root && target !== undefined && others.length > 1;
        return froms.flatMap((from) => {
          const to = idOf(target ?? from);
          if (!collapse || from === target) return [[idOf(from), to]];
          return from === others[0] ? [[anyId, to]] : [];
        });
      });
      for (const [from = "", to = ""] of pairs) {
        const key = from === to || options.mergeEdges ? `${from} ${to}` : `${groups.size}`;
        const group = groups.get(key);
        if (group) group.labels.push(label);
        else groups.set(key, { from, to, labels: [label] });
      }
    }
    return groups;
  };

  const block = (parent: AnyStateNode, indent: string): string[] => {
    const lines: string[] = [];
    const kids = children(parent);
    const groups = edges(parent);
    if (parent.type === "parallel") {
      kids.forEach((kid, i) => {
        if (i > 0) lines.push(`${indent}--`);
        lines.push(...declare(kid, indent, groups));
      });
    } else {
      for (const initial of parent.initial.target) lines.push(`${indent}[*] --> ${idOf(initial)}`);
      for (const kid of kids) lines.push(...declare(kid, indent, groups));
    }
    let anyDeclared = false;
    for (const { from, to, labels } of groups.values()) {
      if (from === anyId && !anyDeclared) lines.push(`${indent}state "any state" as ${anyId}`);
      anyDeclared ||= from === anyId;
      lines.push(`${indent}${from} --> ${to} : ${labels.join("<br/>")}`);
    }
    for (const kid of kids) if (kid.type === "final") lines.push(`${indent}${idOf(kid)} --> [*]`);
    return lines;
  };

  const declare = (node: AnyStateNode, indent: string, groups: ReturnType<typeof edges>): string[] => {
    const id = idOf(node);
    const invokes = invokeNames(node).map((name) => `invoke: ${name}`);
    const inner = options.nestInvoked && node.type === "atomic" ? nestedChart(node, id) : undefined;
    if (inner !== undefined) {
      // Mermaid cannot loop an edge on a box: the state's self-loops go in its title.
      const loops = groups.get(`${id} ${id}`)?.labels ?? [];
      groups.delete(`${id} ${id}`);
      const forwarded = loops.filter((l) => l.endsWith(" (forward)")).map((l) => l.slice(0, -10));
      const title = [
        mermaidText(node.key),
        ...invokes.map((line) => `(${mermaidText(line)})`),
        ...(forwarded.length === 0 ? [] : [`(forwards ${forwarded.join(", ")})`]),
        ...loops.filter((l) => !l.endsWith(" (forward)")).map((l) => `(${l})`),
      ];
      return [`${indent}state "${title.join(" ")}" as ${id} {`, ...inner(`${indent}  `), `${indent}}`];
    }
    if (node.type === "compound" || node.type === "parallel") {
      const label = [node.key, ...invokes.map((line) => `(${line})`)].join(" ");
      return [
        `${indent}state "${mermaidText(label)}" as ${id} {`,
        ...block(node, `${indent}  `),
        `${indent}}`,
      ];
    }
    const label =
      node.type === "history" ? `${node.key} (history${node.history === "deep" ? " deep" : ""})` : node.key;
    return [
      `${indent}state "${mermaidText(label)}" as ${id}`,
      ...invokes.map((line) => `${indent}${id} : ${mermaidText(line)}`),
    ];
  };

  /** The block of the first state machine `node` invokes, drawn with its ids prefixed; undefined if it cannot be. */
  const nestedChart = (node: AnyStateNode, stateId: string): ((indent: string) => string[]) | undefined => {
    const actors = (machine.implementations as { actors?: Record<string, unknown> }).actors ?? {};
    for (const invoke of node.invoke) {
      const logic = typeof invoke.src === "string" ? actors[invoke.src] : invoke.src;
      if (!(logic instanceof StateMachine)) continue;
      const child = logic as AnyStateMachine;
      const childPrefix = `${stateId}__`;
      let chart: MermaidChart;
      try {
        chart = mermaidChart(child, { ...options, nestInvoked: false }, childPrefix);
      } catch {
        return undefined;
      }
      if (Object.values(chart.stateIds).some((id) => taken.has(id))) return undefined;
      for (const id of Object.values(chart.stateIds)) taken.add(id);
      nested.push({
        stateId,
        invokeId: invoke.id,
        machineId: child.id,
        prefix: childPrefix,
        stateIds: chart.stateIds,
      });
      const body = chart.source.split("\n").slice(1, -1);
      return (indent) => body.map((line) => indent + line.slice(2));
    }
    return undefined;
  };

  const source = ["stateDiagram-v2", ...block(machine.root, "  ")].join("\n") + "\n";
  const stateIds = Object.fromEntries(nodes.slice(1).map((node) => [node.path.join("."), idOf(node)]));
  return { source, stateIds, nested };
}
