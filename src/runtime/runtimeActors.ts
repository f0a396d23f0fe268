import { createDurableHost, type DurableHost } from "../durable/index.js";
import type { RuntimeTimers } from "../durable/timers.js";
import type { ActorRecord } from "../persistence/actorRecord.js";
import { lowdbStore } from "../persistence/createLowdbStore.js";
import { isSharedStore, type SnapshotStore } from "../persistence/SnapshotStorePort.js";
import type { AwaitingAnswers } from "./AwaitingAnswers.js";
import { type CollaborationMeta, collaborationMeta } from "./collaborationMeta.js";
import type { EarlierPosts } from "./EarlierPosts.js";
import { provideCollaborate, provideFlow, type SideEffectDeps } from "./sideEffects.js";
import type { ThreadState } from "./ThreadState.js";
import { withdrawCalls } from "./withdrawnCalls.js";

/**
 * Bumped when a machine changes incompatibly: a stored snapshot of another version is then quarantined,
 * unless the machine's registration gets a `migrate` that converts it.
 */
export const MACHINE_VERSIONS = { a2aFlow: 1, collaborate: 1 } as const;

export interface RuntimeActorsDeps {
  /** Where the actors are kept; default: the lowdb store in `stateDir` (whose lock the runtime holds). */
  store: SnapshotStore | undefined;
  stateDir: string;
  cleanupMaxAgeMs: number;
  sideEffects: SideEffectDeps;
  earlierPosts: EarlierPosts;
  threads: ThreadState;
  awaiting: AwaitingAnswers;
  /** Indexes a stored record (participants, routes, awaited answers) when the store opens. */
  indexRecord: (record: Readonly<ActorRecord>) => void;
  emit: (event: { type: string }) => void;
  now: () => number;
  timers: RuntimeTimers;
  inspect: unknown;
  warn: (message: string) => void;
  /** Told of each record queued for the store, with whether its write became durable (for metrics). */
  queued?: (durable: Promise<boolean>) => void;
}

/** The flow and collaboration machines on the durable host, and the store it keeps them in (for the runtime's queries). */
export function createRuntimeActors(d: RuntimeActorsDeps): { host: DurableHost; store: SnapshotStore } {
  const { threads, awaiting } = d;
  const store = d.store ?? lowdbStore({ stateDir: d.stateDir, cleanupMaxAgeMs: d.cleanupMaxAgeMs }, false);
  const host = createDurableHost({
    store,
    machines: {
      a2aFlow: { machine: provideFlow(d.sideEffects), version: MACHINE_VERSIONS.a2aFlow },
      collaborate: { machine: provideCollaborate(d.sideEffects), version: MACHINE_VERSIONS.collaborate },
    },
    now: d.now,
    timers: d.timers,
    inspect: d.inspect,
    logger: { warn: d.warn },
    cleanupMaxAgeMs: d.cleanupMaxAgeMs,
    // A collaboration's thread, agents and mention, for mentions() and the thread index.
    meta: (actor, kind) => (kind === "collaborate" ? { ...collaborationMeta(actor) } : undefined),
    onEmitted: d.emit,
    // The runtime holds the state directory's lock: no other process runs under this name meanwhile.
    instance: d.stateDir,
    name: "A2ARuntime",
    onRecord: (record, durable) => {
      d.queued?.(durable);
      const meta = record.meta as CollaborationMeta | undefined;
      if (meta?.threadId === undefined) return;
      if (meta.parentChannelId !== undefined) {
        threads.addParticipants(meta.threadId, [meta.fromAgentId, meta.targetAgentId]);
      }
      if (record.status === "active") awaiting.add(meta.threadId, record.id);
      else awaiting.remove(meta.threadId, record.id);
    },
    // Each stored live actor, at start or taken over from another process: indexed before it runs.
    onAdopt: d.indexRecord,
    // A post re-run after a restart may have been made before the crash: EarlierPosts checks for it.
    startEffect: (start, restoredFrom) =>
      restoredFrom === undefined ? start() : d.earlierPosts.restoring(restoredFrom, start),
    // Waiting for a run and reading its reply change nothing: they need not wait for the disk.
    ungatedEffects: ["agentWait", "readReply"],
    onOpen: async (store) => {
      // Before any actor resumes: what a stop rejected must not run now.
      await withdrawCalls(threads, store, d.now, d.warn);
      // Finished collaborations are in this process's thread state; a shared archive holds the others'.
      if (isSharedStore(store)) for (const record of await store.list("archive")) d.indexRecord(record);
    },
    // Saved before the state directory's lock is let go: the next start withdraws them (onOpen).
    onAbandoned: (ids) => threads.keepWithdrawn(ids),
    // Routes, participants, parents and observer history expire by age; expire() saves what it drops.
    housekeeping: (at) => threads.expire(at),
  });
  return { host, store };
}
