// Rejections for when the actor itself is the problem, not the store.
import { A2AError } from "../errors/A2AError.js";
import type { ActorStatus } from "../persistence/actorRecord.js";
import { errorText } from "../persistence/DurableJsonFile.js";

/** spawn() with an id that an actor, live or finished, already has: nothing was started. */
export class ActorExistsError extends A2AError {
  override readonly code = "ACTOR_EXISTS";
  override readonly name = "ActorExistsError";

  constructor(
    readonly actorId: string,
    host: string,
    method: "spawn" | "create" = "spawn",
  ) {
    super(`${host}.${method}: an actor ${JSON.stringify(actorId)} already exists`);
  }
}

/** send() to an actor that is not there: none has the id, or it has finished (`status` says how). */
export class ActorNotFoundError extends A2AError {
  override readonly code = "ACTOR_NOT_FOUND";
  override readonly name = "ActorNotFoundError";

  constructor(
    readonly actorId: string,
    host: string,
    /** The stored status of a finished actor (`done` or `error`); undefined when none has the id. */
    readonly status?: ActorStatus,
  ) {
    super(
      status === undefined
        ? `${host}.send: no actor ${JSON.stringify(actorId)}`
        : `${host}.send: actor ${JSON.stringify(actorId)} has finished (${status})`,
    );
  }
}

/** The actor failed (its input, an action or a guard threw), stored as `error`; `cause` is what it threw. */
export class ActorFailedError extends A2AError {
  override readonly code = "ACTOR_FAILED";
  override readonly name = "ActorFailedError";

  constructor(
    readonly actorId: string,
    readonly kind: string,
    method: string,
    cause: unknown,
  ) {
    super(`${method}: actor ${JSON.stringify(actorId)} (${kind}) failed: ${errorText(cause)}`, { cause });
  }
}

/** The host stopped, or another process took the actor over, before it reached what the call waits for. */
export class ActorStoppedError extends A2AError {
  override readonly code = "ACTOR_STOPPED";
  override readonly name = "ActorStoppedError";

  constructor(
    readonly actorId: string,
    why: string,
  ) {
    super(`${why} before actor ${actorId} reached what its caller waits for`);
  }
}
