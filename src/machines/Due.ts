/**
 * A durable timer held in a machine's context: the event the machine waits for and the wall-clock
 * time it is due. XState does not persist `after` timers, so machines never use them: the runtime's
 * scheduler reads `due` from every (child) snapshot and sends `{ type: event, at }` to the root actor
 * when it is due, at once if it is overdue after a restart. Parents forward timer events to the child
 * that owns them.
 */
export interface Due<E extends string = string> {
  event: E;
  at: number;
}

/** A timer event as the runtime delivers it: `at` is the time it was delivered. */
export interface TimerEvent<E extends string> {
  type: E;
  at: number;
}
