import { fromPromise } from "xstate";

/** A side effect that never settles on its own: model-based replays deliver its done/error events. */
export const pending = () => fromPromise<never, unknown>(() => new Promise<never>(() => {}));
