import { type AnyEventObject, fromPromise, type PromiseActorLogic } from "xstate";

/** A side effect that never settles on its own: model-based replays deliver its done/error events. */
export function pending<TOutput, TInput>(): PromiseActorLogic<TOutput, TInput> {
  return fromPromise<TOutput, TInput>(() => new Promise<TOutput>(() => {}));
}

/** Sends any event, typed or not, as the runtime (or a stray sender) could: for junk and actor-done events. */
export function sendRaw(actor: { send: (event: never) => void }, event: AnyEventObject): void {
  (actor.send as (event: AnyEventObject) => void)(event);
}
