// The peers workload as an XState machine: a sleep, a side effect, a second sleep, a second effect.
// The peers worker runs it on the durable host; the overhead benchmark runs it on XState alone too.
import { assign, fromPromise, setup } from "xstate";

/** The workflow; `run(key, due)` is its side effect, returning when it ran. */
export function workflowMachine(run) {
  return setup({
    actors: { effect: fromPromise(async ({ input }) => run(input.key, input.due)) },
    delays: {
      firstSleep: ({ context }) => context.firstSleep,
      secondSleep: ({ context }) => context.secondSleep,
    },
  }).createMachine({
    id: "workflow",
    context: ({ input }) => ({ ...input, firstDoneAt: 0 }),
    initial: "sleeping",
    states: {
      sleeping: { after: { firstSleep: "first" } },
      first: {
        invoke: {
          src: "effect",
          input: ({ context }) => ({ key: `${context.id}#1`, due: context.createdAt + context.firstSleep }),
          onDone: { target: "sleepingAgain", actions: assign({ firstDoneAt: ({ event }) => event.output }) },
        },
      },
      sleepingAgain: { after: { secondSleep: "second" } },
      second: {
        invoke: {
          src: "effect",
          input: ({ context }) => ({
            key: `${context.id}#2`,
            due: context.firstDoneAt + context.secondSleep,
          }),
          onDone: "done",
        },
      },
      done: { type: "final" },
    },
  });
}
