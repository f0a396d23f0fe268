// What the durable host's work per actor costs as the number of actors in flight grows: counted, not
// timed. On the in-memory store, its writes held so that they pile up, in simulated time.
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { fromPromise, setup } from "xstate";
import { createDurableHost, createMemoryStore, type DurableHost } from "../../src/durable/index.js";
import { HoldingStore } from "../support/runtimeParts.js";

const hosts: DurableHost[] = [];
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
});
afterEach(async () => {
  vi.restoreAllMocks();
  for (const host of hosts.splice(0)) await host.stop();
  vi.useRealTimers();
});

/** Promises handed to Promise's array combinators (all, allSettled, any, race) while `run` runs. */
async function promisesAwaitedIn(run: () => Promise<void>): Promise<number> {
  let count = 0;
  for (const name of ["all", "allSettled", "any", "race"] as const) {
    const original = Promise[name].bind(Promise) as (values: Iterable<unknown>) => Promise<unknown>;
    vi.spyOn(Promise, name).mockImplementation(((values: Iterable<unknown>) => {
      const list = [...values];
      count += list.length;
      return original(list);
    }) as never);
  }
  await run();
  vi.restoreAllMocks();
  return count;
}

it("each side effect waits for the writes before it at a cost that does not grow with how many are in flight", async () => {
  let effects = 0;
  const job = setup({ actors: { work: fromPromise(async () => void (effects += 1)) } }).createMachine({
    initial: "working",
    states: { working: { invoke: { src: "work", onDone: "done" } }, done: { type: "final" } },
  });
  const count = async (actors: number) => {
    const store = new HoldingStore(createMemoryStore());
    const host = createDurableHost({ store, machines: { job: { machine: job, version: 1 } } });
    hosts.push(host);
    await host.start();
    effects = 0;
    return promisesAwaitedIn(async () => {
      // Every actor's effect waits while the writes of all the actors before it are still in flight.
      store.hold();
      for (let i = 0; i < actors; i += 1) {
        host.create("job", `job-${i}`);
        await vi.advanceTimersByTimeAsync(0);
      }
      store.release();
      await host.idle();
      expect(effects).toBe(actors);
    });
  };
  const small = await count(100);
  const large = await count(1_000);
  // Linear: ten times the actors, about ten times the work (a quadratic wait would be a hundred times).
  expect(large / small, `promises awaited: ${small} for 100 actors, ${large} for 1,000`).toBeLessThan(15);
});
