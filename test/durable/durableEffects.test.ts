// What the durable host gates: side-effect actors (promise, callback, observable), never child machines.
// Telling a promise (which settles, and idle() waits for) from the others rests on XState building
// every fromPromise logic with the same transition function: pinned here.
import { expect, it } from "vitest";
import { createMachine, fromCallback, fromObservable, fromPromise, fromTransition } from "xstate";
import { isEffectLogic, isPromiseLogic } from "../../src/durable/durableEffects.js";

it("tells side-effect logics from machines, and promises from the rest", () => {
  const promise = fromPromise(async () => 42);
  const callback = fromCallback(() => () => {});
  const observable = fromObservable(() => ({ subscribe: () => ({ unsubscribe: () => {} }) }));
  const machine = createMachine({});
  const reducer = fromTransition((state: number) => state, 0);
  expect([promise, callback, observable].map(isEffectLogic)).toEqual([true, true, true]);
  expect([machine, reducer].map(isEffectLogic)).toEqual([false, false]);
  expect(
    isPromiseLogic(promise),
    "XState no longer builds every fromPromise logic with the same transition: the durable host can no longer tell a promise effect (which idle() waits for) from a callback",
  ).toBe(true);
  expect([callback, observable, machine].map(isPromiseLogic)).toEqual([false, false, false]);
});
