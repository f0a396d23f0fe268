import type { ErrorActorEvent } from "xstate";

/** The error of an invoked actor's error event, as an action or guard parameter. */
export const errorOf = ({ event }: { event: ErrorActorEvent }) => event.error;

/** The time a side effect failed: the runtime's actors stamp the errors they reject with `at`. */
export function failureAt(error: unknown, fallback: number): number {
  const at = (error as { at?: unknown } | null)?.at;
  return typeof at === "number" && Number.isFinite(at) ? Math.max(at, fallback) : fallback;
}

/** What went wrong, in words: an Error's message, or the `message` of an error-like object (a Discord error body). */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === "string" ? message : String(error);
}

/** The body of a placeholder side-effect actor: fails loudly until the runtime (or a test) provides the real one. */
export const unprovided = (name: string) => async (): Promise<never> => {
  throw new Error(
    `the ${name} actor was not provided: supply it with machine.provide({ actors: { ${name} } })`,
  );
};
