import type { EventObject } from "xstate";
import { type ActorRecord, ActorTakenOverError } from "../persistence/actorRecord.js";
import {
  isSharedStore,
  type SharedStoreEvents,
  type SnapshotStore,
  type StoredDelivery,
} from "../persistence/SnapshotStorePort.js";
import type { DurableActorInfo } from "./durableHostTypes.js";
import { type Entry, summary } from "./hostedActors.js";
import type { Host } from "./DurableHost.js";

/** What a host does with a shared store's news, plus `started()`, which the host calls once running. */
export interface HostSharedStoreEvents extends SharedStoreEvents {
  started(): void;
}

/**
 * A shared store's news: claimed actors adopted (claims while starting wait for it), events delivered,
 * actors taken over dropped.
 */
export function sharedStoreEvents(host: Host): HostSharedStoreEvents {
  let early: Array<Readonly<ActorRecord>> | undefined = [];
  const adopt = (records: ReadonlyArray<Readonly<ActorRecord>>) => {
    for (const record of records) host.adopt(record);
  };
  return {
    claimed(records) {
      if (early !== undefined) early.push(...records);
      else adopt(records);
    },
    async delivered(deliveries: readonly StoredDelivery[]) {
      // Not before running: the events stay in the store, delivered at a later round.
      if (!host.running) return deliveries.map(() => false);
      const told = deliveries.map(({ id, event }) => {
        const entry = host.hostedOrWoken(id);
        if (entry === undefined) return undefined;
        entry.actor.send(event);
        return entry;
      });
      host.flush();
      // Applied only once durable here: one taken over meanwhile stays in the store for its new owner.
      return Promise.all(
        told.map(
          (entry) =>
            entry?.lastWrite.then(
              () => true,
              () => false,
            ) ?? false,
        ),
      );
    },
    lost(ids) {
      for (const id of ids) host.drop(id);
    },
    started() {
      const claimed = early ?? [];
      early = undefined;
      adopt(claimed);
    },
  };
}

/** With a shared store, the other processes' live actors (as last stored) that `here` does not list. */
export async function listedElsewhere(
  store: SnapshotStore,
  here: ReadonlyArray<{ id: string }>,
): Promise<Array<Omit<DurableActorInfo, "context">>> {
  if (!isSharedStore(store)) return [];
  const known = new Set(here.map((actor) => actor.id));
  return (await store.listEveryLive())
    .filter((record) => !known.has(record.id))
    .map((record) => summary(record));
}

/**
 * Waits until an event's change is durable; an actor taken over meanwhile gets the event through the
 * store. Call after sending the event and `host.flush()`.
 */
export async function landedOrRelayed(store: SnapshotStore, entry: Entry, event: EventObject): Promise<void> {
  try {
    await entry.lastWrite;
  } catch (error) {
    if (!(error instanceof ActorTakenOverError) || !isSharedStore(store)) throw error;
    await store.sendTo({ id: entry.id, event: event as StoredDelivery["event"] });
  }
}
