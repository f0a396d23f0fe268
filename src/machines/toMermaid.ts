import type { AnyStateMachine, AnyStateNode } from "xstate";
import { a2aFlowMachine } from "./a2aFlowMachine.js";
import { collaborateMachine } from "./collaborateMachine.js";
import { mentionMachine } from "./mentionMachine.js";
import { pingPongMachine } from "./pingPongMachine.js";
import { replyWaitMachine } from "./replyWaitMachine.js";
import { describeTransition, listTransitions, type TransitionInfo } from "./transitions.js";

// Statechart diagrams, generated from the machine objects (`npm run diagrams` writes them to
// docs/statecharts; a test fails when the committed pages are stale). Pure: no I/O.

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

/** A valid Mermaid id for a state: its key path joined with `_`, clear of keywords and Mermaid's own `x_start`/`x_end`. */
/**
 * The Mermaid id toMermaid gives the state at `path` (its keys from the root): the path joined with `_`,
 * anything but letters, digits and `_` as `_`, and a `_` suffix for keywords and ids ending `_start`/`_end`.
 */
export function mermaidStateId(path: readonly string[]): string {
  const id = path.join("_").replace(/[^\p{L}\p{N}_]/gu, "_");
  return RESERVED_IDS.has(id.toLowerCase()) || /_(start|end)$/.test(id) ? `${id}_` : id;
}

function mermaidId(node: AnyStateNode): string {
  return mermaidStateId(node.path);
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

/**
 * The machine as a Mermaid `stateDiagram-v2`: its initial state, every state (compound ones as
 * `state x { … }`, states that invoke an actor with an `invoke: name` line), every transition of
 * listTransitions labelled `event [guard]`, and final states to `[*]`. A transition on the machine
 * root applies in every live state, so it is drawn from each non-final top-level state but the
 * transient ones (left at once by an unguarded `always`, they never see the event); a
 * transition without a target is a self-loop marked `(forward)` (or `(actions only)`), and the
 * self-loops of one state share one edge with a label line each (Mermaid draws one). Ids are the
 * state's key path joined with `_`, each declared as `state "key" as id`. Deterministic: states in
 * definition order, transitions in listTransitions order.
 */
export function toMermaid(machine: AnyStateMachine): string {
  const nodes = allNodes(machine.root);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const ids = new Map<AnyStateNode, string>();
  for (const node of nodes.slice(1)) {
    const id = mermaidId(node);
    const clash = [...ids.entries()].find(([, other]) => other === id);
    if (clash)
      throw new Error(`toMermaid: states ${clash[0].id} and ${node.id} both map to the Mermaid id ${id}`);
    ids.set(node, id);
  }
  const idOf = (node: AnyStateNode): string => ids.get(node) ?? mermaidId(node);
  const nodeOf = (stateId: string): AnyStateNode => {
    const node = byId.get(stateId);
    if (node === undefined) throw new Error(`toMermaid: ${machine.id} has no state ${stateId}`);
    return node;
  };

  const transitions = listTransitions(machine);

  /**
   * The edges drawn in `parent`'s block: transitions of its children, root ones in the top block.
   * Mermaid draws only one self-loop per state, so a state's self-loops share one edge, a label line each.
   */
  const edges = (parent: AnyStateNode): string[] => {
    const lines: Array<string | { id: string; labels: string[] }> = [];
    const loops = new Map<AnyStateNode, { id: string; labels: string[] }>();
    for (const t of transitions) {
      const source = nodeOf(t.source);
      const label = edgeLabel(t, source);
      const targets = t.targets.map(nodeOf);
      const froms =
        source === machine.root
          ? parent === machine.root
            ? children(machine.root).filter((node) => isLive(node) && !isTransient(node))
            : []
          : source.parent === parent
            ? [source]
            : [];
      for (const from of froms) {
        for (const to of targets.length ? targets : [from]) {
          const loop = to === from ? loops.get(from) : undefined;
          if (to !== from) lines.push(`${idOf(from)} --> ${idOf(to)} : ${label}`);
          else if (loop) loop.labels.push(label);
          else {
            const entry = { id: idOf(from), labels: [label] };
            loops.set(from, entry);
            lines.push(entry);
          }
        }
      }
    }
    return lines.map((line) =>
      typeof line === "string" ? line : `${line.id} --> ${line.id} : ${line.labels.join("<br/>")}`,
    );
  };

  const block = (parent: AnyStateNode, indent: string): string[] => {
    const lines: string[] = [];
    const kids = children(parent);
    if (parent.type === "parallel") {
      kids.forEach((kid, i) => {
        if (i > 0) lines.push(`${indent}--`);
        lines.push(...declare(kid, indent));
      });
    } else {
      for (const initial of parent.initial.target) lines.push(`${indent}[*] --> ${idOf(initial)}`);
      for (const kid of kids) lines.push(...declare(kid, indent));
    }
    lines.push(...edges(parent).map((line) => indent + line));
    for (const kid of kids) if (kid.type === "final") lines.push(`${indent}${idOf(kid)} --> [*]`);
    return lines;
  };

  const declare = (node: AnyStateNode, indent: string): string[] => {
    const id = idOf(node);
    const invokes = invokeNames(node).map((name) => `invoke: ${name}`);
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

  return ["stateDiagram-v2", ...block(machine.root, "  ")].join("\n") + "\n";
}

interface MachineDoc {
  name: string;
  machine: AnyStateMachine;
  /** One line for the index. */
  tagline: string;
  /** What the machine is for (from its doc comment). */
  purpose: string;
}

const MACHINES: MachineDoc[] = [
  {
    name: "replyWaitMachine",
    machine: replyWaitMachine,
    tagline: "Sends one message to the target agent and waits for its reply, with retries.",
    purpose:
      "Waits for the target agent's reply to one message. It sends the message, then waits " +
      "in chunks of `chunkMs` up to `maxWaitMs`. Each failure is classified; a retryable one backs off " +
      "and then either waits again on the same run or resends the message as a new run with the same " +
      "idempotency key. The machine ends `replied` or `blocked`.",
  },
  {
    name: "pingPongMachine",
    machine: pingPongMachine,
    tagline: "Steers the follow-up conversation between requester and target, turn by turn.",
    purpose:
      "Steers the follow-up conversation between requester and target. The two agents " +
      "take alternating steps; after each reply the first guard that holds ends the conversation: no " +
      "reply, an explicit skip, then (with `autoTerminate`) repetition, minimal content or a conclusion, " +
      "else the turn limit. With no turns to take, or no primary reply, it ends at once.",
  },
  {
    name: "a2aFlowMachine",
    machine: a2aFlowMachine,
    tagline: "One `sessions_send` from start to end: reply, ping-pong, announce, complete.",
    purpose:
      "Runs one `sessions_send` from start to end. It waits for the reply (the " +
      "replyWait machine, with its retries), steers the ping-pong (the pingPong machine), announces the " +
      "result only when that is worth an LLM call, and always finishes with `a2a.complete`, whether the " +
      "reply came, was blocked or timed out, in sync and async mode alike.",
  },
  {
    name: "mentionMachine",
    machine: mentionMachine,
    tagline: "Tracks one mention of an agent in a thread: reminders, then escalation to a human.",
    purpose:
      "Tracks one mention of an agent in a Discord thread until the agent answers. At each timeout " +
      "the requester's bot reminds the target; after the last reminder's timeout it escalates to a " +
      "human. Each timeout is `after responseTimeout`, counted from the latest " +
      "delivery, and a failed post is tried again `after retryDelay`; the runtime keeps both across a " +
      "restart. The target's answer or a cancel ends the mention in any live state. With " +
      "reminders off (`discord.a2aRetry.enabled: false`) no timeout is armed and the mention waits `untimed`.",
  },
  {
    name: "collaborateMachine",
    machine: collaborateMachine,
    tagline: "One `discord_send`: validate, resolve the thread, post the mention in it, track it.",
    purpose:
      "Runs one `discord_send`. It validates the request and resolves the thread " +
      "(the explicit one, one reused within the TTL, or a new one). A new collaboration thread " +
      "(`[협업] from → to · topic` in Korean) is opened from a starter message posted in the channel without pings (one thread per " +
      "message, so a re-run after a crash cannot open a second). The mention is posted inside the " +
      "thread, where the target's bot handles it. A failure Discord allows to retry is " +
      "retried from the step that failed; then the mention is tracked (the mention machine) until the " +
      "target answers or a human is called.",
  },
];

const GENERATED =
  "<!-- Generated by `npm run diagrams` (src/machines/toMermaid.ts). Do not edit by hand. -->";

function cell(text: string): string {
  return text.replace(/\|/g, "\\|");
}

function code(text: string): string {
  return `\`${cell(text)}\``;
}

/** A state as the tables name it: its key path (`a.b`), or `(any live state)` for the machine root. */
function stateName(machine: AnyStateMachine, stateId: string): string {
  const node = machine.getStateNodeById(stateId);
  return node === machine.root ? "(any live state)" : code(node.path.join("."));
}

function machinePage({ name, machine, purpose }: MachineDoc): string {
  const transitions = listTransitions(machine);
  const rows = transitions.map((t) => {
    const reentered = t.reenter && t.targets.length > 0 ? " (re-entered)" : "";
    const target = t.targets.length
      ? t.targets.map((id) => stateName(machine, id)).join(", ") + reentered
      : "(none: actions only)";
    return `| ${stateName(machine, t.source)} | ${code(eventLabel(t.event))} | ${t.guard === undefined ? "" : code(t.guard)} | ${target} |`;
  });
  const rootEvents = [
    ...new Set(transitions.filter((t) => t.source === machine.root.id).map((t) => t.event)),
  ];
  const rootNote = rootEvents.length
    ? [
        "",
        `${rootEvents.map((e) => code(eventLabel(e))).join(" and ")} ${rootEvents.length > 1 ? "are" : "is"} handled ` +
          "on the machine root, in every live state: the diagram draws those transitions from each non-final " +
          "state but transient ones (left at once by an `always` without a guard).",
      ]
    : [];
  return [
    `# ${name}`,
    "",
    GENERATED,
    "",
    purpose,
    "",
    "```mermaid",
    toMermaid(machine).trimEnd(),
    "```",
    ...rootNote,
    "",
    "## Transitions",
    "",
    "In definition order: for one source and event, the first row whose guard holds is taken.",
    "",
    "| Source | Event | Guard | Target |",
    "| --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n");
}

function indexPage(): string {
  return [
    "# Statecharts",
    "",
    GENERATED,
    "",
    "One Mermaid diagram per XState machine in `src/machines`, generated from the machine objects by " +
      "`npm run diagrams`. A test fails when these pages differ from what the script would generate now: " +
      "after changing a machine, run `npm run diagrams` and commit the result.",
    "",
    "| Machine | What it does |",
    "| --- | --- |",
    ...MACHINES.map((m) => `| [${m.name}](${m.name}.md) | ${cell(m.tagline)} |`),
    "",
    "## Reading the diagrams",
    "",
    "- An edge is labelled `event [guard]`; an edge without a guard is the fallback taken when the " +
      "guarded ones before it (see each page's table) do not hold.",
    "- `done: x` and `error: x` are the completion and failure of the actor invoked with id `x`; " +
      "`always` is an eventless transition, taken as soon as its guard holds.",
    "- A state that runs an actor while it is active shows `invoke: x`.",
    "- A self-loop is a transition back into the same state; the table marks the ones that re-enter it " +
      "(exit and enter again, which restarts its actor). A self-loop marked `(forward)` is a transition " +
      "with no target that only sends the event on to the invoked child (`(actions only)` if it does more).",
    "- Transitions on the machine root apply in every live state and are drawn from each non-final state " +
      "but transient ones (left at once by an `always` without a guard, they never see an event).",
    "- `[*]` marks the initial state and the final states.",
    "",
  ].join("\n");
}

/** One markdown page per machine under docs/statecharts, plus the index (README.md). Pure. */
export function statechartDocs(): Array<{ file: string; content: string }> {
  return [
    ...MACHINES.map((m) => ({ file: `docs/statecharts/${m.name}.md`, content: machinePage(m) })),
    { file: "docs/statecharts/README.md", content: indexPage() },
  ];
}
