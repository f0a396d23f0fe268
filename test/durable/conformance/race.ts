// A race of two XState delays in parallel regions: region `slow` is entered first and schedules its
// delay first, region `fast` falls due first; the first to fire claims the win, the other loses.
import { assign, setup } from "xstate";

export interface RaceInput {
  fastMs: number;
  slowMs: number;
}

/** The race; `note` is told each region's name when its delay fires. */
export function raceMachine(note: (label: string) => void) {
  const region = (name: "slow" | "fast") =>
    ({
      initial: "waiting",
      states: {
        waiting: {
          after: {
            [name]: [
              {
                guard: "unclaimed",
                target: "won",
                actions: [
                  { type: "note", params: { label: name } },
                  { type: "claim", params: { by: name } },
                ],
              },
              { target: "lost", actions: { type: "note", params: { label: name } } },
            ],
          },
        },
        won: { type: "final" },
        lost: { type: "final" },
      },
    }) as const;
  return setup({
    types: {
      context: {} as RaceInput & { winner: string | null },
      input: {} as RaceInput,
    },
    actions: {
      note: (_, params: { label: string }) => note(params.label),
      claim: assign({ winner: (_, params: { by: string }) => params.by }),
    },
    guards: { unclaimed: ({ context }) => context.winner === null },
    delays: { fast: ({ context }) => context.fastMs, slow: ({ context }) => context.slowMs },
  }).createMachine({
    id: "race",
    type: "parallel",
    context: ({ input }) => ({ ...input, winner: null }),
    states: { slow: region("slow"), fast: region("fast") },
  });
}
