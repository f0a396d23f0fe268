/**
 * A durable timer held in a machine's context: the event the machine waits for and the wall-clock
 * time it is due. The runtime's scheduler reads `due` from every (child) snapshot and sends
 * `{ type: event, at }` to the root actor when it is due, at once if it is overdue after a restart.
 * Parents forward timer events to the child that owns them. This package's machines wait with XState
 * `after` delays, which the runtime keeps durable too; they read `due` only in snapshots stored with one
 * by an earlier release, which still move on at that time.
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
