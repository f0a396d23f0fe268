import type { ErrorActorEvent } from "xstate";

/** The error of an invoked actor's error event, as an action or guard parameter. */
export const errorOf = ({ event }: { event: ErrorActorEvent }) => event.error;

/** The time a side effect failed: the runtime's actors stamp the errors they reject with `at`. */
export function failureAt(error: unknown, fallback: number): number {
  const at = (error as { at?: unknown } | null)?.at;
  return typeof at === "number" && Number.isFinite(at) ? Math.max(at, fallback) : fallback;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
