/**
 * A durable timer held in a machine's context: the event the machine waits for and the wall-clock
 * time it is due. The runtime's scheduler reads `due` from every (child) snapshot and sends
 * `{ type: event, at }` to the root actor when it is due, at once if it is overdue after a restart.
 * Parents forward timer events to the child that owns them. A wait that needs no delivery time in its
 * event reads better as an XState `after` with a named delay, which the runtime keeps durable too;
 * `due` remains for the waits not moved yet and for snapshots stored with one.
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
