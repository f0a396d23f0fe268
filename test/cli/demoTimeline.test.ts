import { describe, expect, it } from "vitest";
import { type AnyActorRef, createActor, setup } from "xstate";
import { Timeline } from "../../src/cli/demo/Timeline.js";
import type { A2AEvent } from "../../src/policies/index.js";

// Small stand-ins for the runtime's machines: a root whose context names its parties and the keys a
// scenario passes (routeKey, topicId), with a child machine that finishes when told, itself with a
// grandchild that does the same.
const leaf = setup({}).createMachine({
  id: "leaf",
  initial: "working",
  states: { working: { on: { FINISH: "finished" } }, finished: { type: "final" } },
});

const middle = setup({ actors: { leaf } }).createMachine({
  id: "middle",
  initial: "waiting",
  states: {
    waiting: { invoke: { id: "leaf", src: "leaf", onDone: "done" } },
    done: { type: "final" },
  },
});

interface RootContext {
  fromAgentId: string;
  targetAgentId: string;
  routeKey?: string;
  topicId?: string;
  conversationId?: string;
  collaborationId?: string;
}

const root = setup({
  types: { context: {} as RootContext, input: {} as RootContext },
  actors: { middle },
}).createMachine({
  id: "root",
  context: ({ input }) => input,
  initial: "awaiting",
  states: {
    awaiting: { invoke: { id: "middle", src: "middle", onDone: "completed" } },
    completed: { type: "final" },
  },
});

/** A timeline on a clock that moves 100 ms each time it is read, and the lines it printed. */
function harness() {
  const lines: string[] = [];
  let now = 0;
  const timeline = new Timeline({ elapsed: () => (now += 100), print: (line) => lines.push(line) });
  return { timeline, lines };
}

function run(timeline: Timeline, input: RootContext) {
  const actor = createActor(root, { input, inspect: timeline.inspect });
  actor.start();
  return actor;
}

/** Finishes the grandchild, which finishes the child, which finishes the root. */
function finish(actor: ReturnType<typeof run>): void {
  const middleRef = actor.getSnapshot().children.middle as AnyActorRef;
  (middleRef.getSnapshot().children.leaf as AnyActorRef).send({ type: "FINISH" });
}

const retry = (conversationId: string): A2AEvent => ({
  type: "a2a.retry",
  ts: 0,
  conversationId,
  data: {
    errorCode: "rate_limit",
    errorCategory: "transient",
    errorMessage: "429",
    attempt: 1,
    maxAttempts: 3,
    backoffMs: 2_000,
    conversationId,
    fromAgent: "ruda",
    toAgent: "eden",
  },
});

describe("the demo's timeline", () => {
  it("tags every line of a scenario's actors, their children and their events with the scenario", () => {
    const { timeline, lines } = harness();
    timeline.claim("review", "[4 review]");
    timeline.claim("unanswered", "[7 unanswered]");
    const flow = run(timeline, {
      fromAgentId: "ruda",
      targetAgentId: "eden",
      routeKey: "review",
      conversationId: "c-1",
    });
    const collaboration = run(timeline, {
      fromAgentId: "ruda",
      targetAgentId: "seum",
      topicId: "unanswered",
      collaborationId: "m-1",
    });
    const stranger = run(timeline, { fromAgentId: "eden", targetAgentId: "seum", routeKey: "elsewhere" });
    timeline.onA2AEvent(retry("c-1"));
    timeline.onA2AEvent({
      type: "a2a.mention.reminded",
      ts: 0,
      data: {
        mentionId: "m-1",
        threadId: "t-1",
        targetAgentId: "seum",
        attempts: 1,
        maxAttempts: 3,
        elapsedMinutes: 5,
      },
    });
    timeline.note("▶ the review starts", "review");
    for (const actor of [flow, collaboration, stranger]) finish(actor);

    const review = lines.filter(
      (l) => l.includes("ruda→eden") || l.includes("rate_limit") || l.includes("▶"),
    );
    const unanswered = lines.filter((l) => l.includes("ruda→seum") || l.includes("a2a.mention.reminded"));
    // root, middle and leaf each start and finish; the root's lines name its parties.
    expect(review.filter((l) => l.includes("ruda→eden"))).toHaveLength(6);
    for (const line of review) expect(line).toMatch(/^ {2}\+\d\d:\d\d\.\d {2}\[4 review\] +\S/);
    expect(unanswered.filter((l) => l.includes("ruda→seum"))).toHaveLength(6);
    for (const line of unanswered) expect(line).toMatch(/^ {2}\+\d\d:\d\d\.\d {2}\[7 unanswered\] +\S/);
    // Nobody claimed the third root: its lines carry a blank tag column.
    const others = lines.filter((l) => l.includes("eden→seum"));
    expect(others).toHaveLength(6);
    for (const line of others) expect(line).toMatch(/^ {2}\+\d\d:\d\d\.\d {2} {14} {2}root eden→seum/);
  });

  it("keeps the columns in place for a label longer than its column, cutting it with …", () => {
    const { timeline, lines } = harness();
    timeline.claim("long", "[1 long]");
    const actor = run(timeline, {
      fromAgentId: "an-agent-with-a-remarkably-long-identifier",
      targetAgentId: "eden",
      routeKey: "long",
    });
    run(timeline, { fromAgentId: "ruda", targetAgentId: "eden", routeKey: "long" });
    finish(actor);
    const changeColumn = (line: string) => line.search(/\((start)\) → |\S+ → /);
    const columns = new Set(lines.map(changeColumn));
    expect(columns.size).toBe(1);
    const cut = lines.filter((l) => l.includes("an-agent-with"));
    expect(cut.length).toBeGreaterThan(0);
    for (const line of cut) expect(line).toMatch(/… (\(start\)|working|waiting|awaiting) /);
    // The event column lines up with the actors' change column too.
    timeline.onA2AEvent(retry("nobody's"));
    expect(changeColumn(lines.at(-1) ?? "")).toBe(-1);
    expect((lines.at(-1) ?? "").indexOf("a2a.retry")).toBe([...columns][0]);
  });

  it("prints a child's final transition before the parent's transition it causes, in time order", () => {
    const { timeline, lines } = harness();
    finish(run(timeline, { fromAgentId: "ruda", targetAgentId: "eden" }));
    const finals = lines.filter((l) => / → (finished|done|completed) /.test(l));
    expect(finals.map((l) => l.match(/(\w+) → (finished|done|completed)/)?.[2])).toEqual([
      "finished",
      "done",
      "completed",
    ]);
    // The parent's lines were held until the child's: their time stamps still never go back.
    const stamps = lines.map((l) => l.slice(2, 10));
    expect([...stamps].sort()).toEqual(stamps);
  });
});
