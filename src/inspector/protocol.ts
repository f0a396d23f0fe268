// What the inspector server sends its page, and the page's settings: types only, importing nothing, so the
// page's browser scripts (page/*.js, type-checked by tsconfig.page.json) check against the same definitions.

export type ActorStatus = "active" | "done" | "error" | "stopped";

/** One actor as the page shows it. JSON-safe: ids, texts and numbers only. */
export interface ActorView {
  sessionId: string;
  id: string;
  systemId?: string;
  parentSessionId?: string;
  /** The machine's id, when the actor runs a state machine (else a promise, callback, … actor). */
  machineId?: string;
  /** The state value as text (`awaitingResponse`, `a.b`); "" for an actor that is not a machine. */
  state: string;
  /** Mermaid ids (in the machine's chart) of the active leaf states and of their active ancestors. */
  current: string[];
  active: string[];
  status: ActorStatus;
  error?: string;
  /** Order of registration, and of the latest snapshot (the page follows the most recently updated). */
  seq: number;
  updatedSeq: number;
  updatedAt: number;
}

/** One event delivered to an actor. */
export interface EventView {
  seq: number;
  at: number;
  type: string;
  targetSessionId: string;
  targetId: string;
  sourceSessionId?: string;
  sourceId?: string;
  /** A short JSON preview of the event's other fields (actor refs, functions and deep values left out). */
  data?: string;
}

/** The whole current state of the inspector: actors, their machines' charts, the latest events. */
export interface InspectorHello {
  kind: "hello";
  actors: ActorView[];
  machines: MachineChart[];
  events: EventView[];
}

/** What the page is sent: the whole current state first, then each change. */
export type InspectorMessage =
  | InspectorHello
  | { kind: "machine"; machine: MachineChart }
  | { kind: "actor"; actor: ActorView }
  | { kind: "drop"; sessionIds: string[] }
  | { kind: "event"; event: EventView };

/** A machine as the inspector page draws it: its Mermaid source and the Mermaid id of each state. */
export interface MachineChart {
  machineId: string;
  /** The `stateDiagram-v2` source (mermaidChart's, as the inspector draws it); null if it failed (`error`). */
  mermaid: string | null;
  error?: string;
  /** State key path (`a.b`) → the id toMermaid gives that state in `mermaid`. */
  stateIds: Record<string, string>;
  /** Machines invoked by a state, drawn inside that state's box (the page marks their actors' states there). */
  nested?: NestedChart[];
}

/** A machine a state invokes, drawn inside that state: its states' ids are the child chart's with `prefix`. */
export interface NestedChart {
  /** The Mermaid id of the invoking state in the parent chart. */
  stateId: string;
  /** The invocation's id: the child actor's id. */
  invokeId: string;
  /** The invoked machine's id (its actors' `machineId`). */
  machineId: string;
  /** Prepended to the child chart's Mermaid ids inside the parent chart. */
  prefix: string;
  /** State key path in the child machine → its Mermaid id in the parent chart (prefix included). */
  stateIds: Record<string, string>;
}

/** The page's settings, put into the page by the server as JSON (the `page-config` block of index.html). */
export interface PageConfig {
  /** The most events the page keeps: the server's MAX_EVENTS. */
  maxEvents: number;
}
