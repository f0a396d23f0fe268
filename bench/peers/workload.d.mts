/** The sleeps' bounds of a peers job (the rest of the job is the orchestrator's and the workers'). */
export interface SleepRange {
  sleepMinMs: number;
  sleepMaxMs: number;
}

/** Workflow i's first sleep, spread evenly between the bounds by its number. */
export function firstSleep(i: number, job: SleepRange): number;
/** Workflow i's second sleep, spread the same way. */
export function secondSleep(i: number, job: SleepRange): number;
/** Workflow i's id. */
export function workflowId(i: number): string;
