import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type AnyStateMachine, fromPromise, sendTo, setup } from "xstate";
import {
  a2aFlowMachine,
  collaborateMachine,
  mentionMachine,
  pingPongMachine,
  replyWaitMachine,
} from "../../src/index.js";
import { listTransitions, statechartDocs, toMermaid } from "../../src/machines/index.js";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const machines: Record<string, AnyStateMachine> = {
  replyWaitMachine,
  pingPongMachine,
  a2aFlowMachine,
  mentionMachine,
  collaborateMachine,
};

function readCommitted(file: string): string | undefined {
  try {
    return readFileSync(join(repoRoot, file), "utf8");
  } catch {
    return undefined;
  }
}

describe("docs/statecharts", () => {
  it("has one page per machine plus the index", () => {
    expect(statechartDocs().map((doc) => doc.file)).toEqual([
      ...Object.keys(machines).map((name) => `docs/statecharts/${name}.md`),
      "docs/statecharts/README.md",
    ]);
  });

  it("holds no page that the script no longer generates", () => {
    const generated = statechartDocs().map((doc) => doc.file);
    const committed = readdirSync(join(repoRoot, "docs/statecharts"))
      .filter((name) => name.endsWith(".md"))
      .map((name) => `docs/statecharts/${name}`);
    const orphans = committed.filter((file) => !generated.includes(file));
    expect(orphans, "pages no machine generates: delete them and run `npm run diagrams`").toEqual([]);
  });

  it.each(statechartDocs().map((doc) => [doc.file, doc.content] as const))(
    "%s is what `npm run diagrams` generates now",
    (file, content) => {
      const committed = readCommitted(file);
      expect(committed, `${file} is missing: run \`npm run diagrams\` and commit the result`).toBeDefined();
      expect(committed, `${file} is stale: run \`npm run diagrams\` and commit the result`).toBe(content);
    },
  );
});

/** The ids a diagram declares with `state "label" as id`. */
function declaredIds(mermaid: string): Set<string> {
  return new Set([...mermaid.matchAll(/^\s*state "[^"]*" as (\S+)/gm)].map((m) => m[1] ?? ""));
}

describe("toMermaid on the machines", () => {
  it.each(Object.entries(machines))("%s renders a stateDiagram-v2", (_, machine) => {
    const text = toMermaid(machine);
    expect(text.startsWith("stateDiagram-v2\n")).toBe(true);
    expect(toMermaid(machine)).toBe(text);
  });

  it.each(Object.entries(machines))("%s shows every guard of listTransitions", (_, machine) => {
    const text = toMermaid(machine);
    for (const t of listTransitions(machine))
      if (t.guard !== undefined) expect(text).toContain(`[${t.guard}]`);
  });

  it.each(Object.entries(machines))("%s draws edges between declared ids only", (_, machine) => {
    const text = toMermaid(machine);
    const declared = declaredIds(text);
    const edges = text.split("\n").filter((line) => line.includes("-->"));
    expect(edges.length).toBeGreaterThan(0);
    for (const line of edges) {
      const match = /^\s*(\S+) --> (\S+)(?: : .+)?$/.exec(line);
      expect(match, line).not.toBeNull();
      for (const end of [match?.[1], match?.[2]]) {
        if (end !== "[*]") expect(declared, `${line}: ${end} is not declared`).toContain(end);
      }
    }
    for (const id of declared) expect(id).toMatch(/^[A-Za-z0-9_]+$/);
  });

  it("draws the mention's root transitions from each live state", () => {
    const text = toMermaid(mentionMachine);
    for (const state of ["pending", "reminding", "reminded", "escalating"]) {
      expect(text).toContain(`${state} --> responded : RESPONSE_RECEIVED [targetAnswered]`);
      expect(text).toContain(`${state} --> cancelled : CANCEL`);
    }
    expect(text).not.toMatch(/^\s*(escalated|responded|cancelled) --> (responded|cancelled)/m);
  });
});

describe("toMermaid output", () => {
  it("renders a small machine exactly", () => {
    const tiny = setup({
      guards: { g: () => true },
      actors: { job: fromPromise(async () => "ok") },
    }).createMachine({
      id: "tiny",
      initial: "idle",
      states: {
        idle: { on: { POKE: { guard: "g", target: "idle" }, START: "working" } },
        working: { invoke: { id: "job", src: "job", onDone: "checking", onError: "idle" } },
        checking: { always: [{ guard: "g", target: "finished" }, { target: "idle" }] },
        finished: { type: "final" },
      },
    });
    expect(toMermaid(tiny)).toBe(
      [
        "stateDiagram-v2",
        "  [*] --> idle",
        '  state "idle" as idle',
        '  state "working" as working',
        "  working : invoke: job",
        '  state "checking" as checking',
        '  state "finished" as finished',
        "  idle --> idle : POKE [g]",
        "  idle --> working : START",
        "  working --> checking : done: job",
        "  working --> idle : error: job",
        "  checking --> finished : always [g]",
        "  checking --> idle : always",
        "  finished --> [*]",
        "",
      ].join("\n"),
    );
  });

  it("renders nested and parallel states, root and targetless transitions", () => {
    const nested = setup({ actors: { child: fromPromise(async () => 1) } }).createMachine({
      id: "nested",
      initial: "note",
      on: { RESET: ".note" },
      states: {
        // `note` is a Mermaid keyword, and `outer_start` would clash with Mermaid's own start node.
        note: { on: { NEXT: "outer", LOG: { actions: () => undefined } } },
        outer: {
          initial: "start",
          invoke: { id: "child", src: "child" },
          on: { PING: { actions: sendTo("child", ({ event }) => event) } },
          onDone: "both",
          states: { start: { on: { GO: "end" } }, end: { type: "final" } },
        },
        both: {
          type: "parallel",
          states: {
            left: { initial: "a", states: { a: {} } },
            right: { initial: "b", states: { b: { type: "final" } } },
          },
        },
      },
    });
    expect(toMermaid(nested)).toBe(
      [
        "stateDiagram-v2",
        "  [*] --> note_",
        '  state "note" as note_',
        '  state "outer (invoke: child)" as outer {',
        "    [*] --> outer_start_",
        '    state "start" as outer_start_',
        '    state "end" as outer_end_',
        "    outer_start_ --> outer_end_ : GO",
        "    outer_end_ --> [*]",
        "  }",
        '  state "both" as both {',
        '    state "left" as both_left {',
        "      [*] --> both_left_a",
        '      state "a" as both_left_a',
        "    }",
        "    --",
        '    state "right" as both_right {',
        "      [*] --> both_right_b",
        '      state "b" as both_right_b',
        "      both_right_b --> [*]",
        "    }",
        "  }",
        "  note_ --> note_ : RESET<br/>LOG (actions only)",
        "  outer --> note_ : RESET",
        "  both --> note_ : RESET",
        "  note_ --> outer : NEXT",
        "  outer --> outer : PING (forward)",
        "  outer --> both : done: state nested.outer",
        "",
      ].join("\n"),
    );
  });
});
