/**
 * The base of every error class of a2a-statecharts: `error instanceof A2AError` tells ours from any
 * other, and `code` says which failure it is without reading the message (the message may change
 * between releases; the code does not). `name` is the class's name, and `cause`, when there is one,
 * is the failure underneath (a file system or driver error).
 */
export abstract class A2AError extends Error {
  /** Which failure this is, in SCREAMING_SNAKE_CASE (`STATE_DIR_LOCKED`): stable across releases. */
  abstract readonly code: string;
  override readonly name: string = "A2AError";
}
