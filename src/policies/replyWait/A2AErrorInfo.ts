/** How a failed wait for an agent's reply may be recovered. */
export enum A2AErrorCategory {
  /** Recoverable by retrying: rate limit, network blip, overloaded server. */
  TRANSIENT = "transient",
  /** Not recoverable: context exceeded, a session that is gone, an unknown error. */
  PERMANENT = "permanent",
  /** Recoverable once, by resending: the run was not found. */
  CONDITIONAL = "conditional",
}

export type A2AErrorCode =
  | "gateway_connection"
  | "session_not_found"
  | "session_gone"
  | "rate_limit"
  | "context_exceeded"
  | "server_overload"
  | "unknown_error"
  | "wait_timeout";

/** Why a reply wait failed, how to treat it, and where its retries stand. */
export interface A2AErrorInfo {
  category: A2AErrorCategory;
  code: A2AErrorCode;
  message: string;
  retryable: boolean;
  retryAfterMs?: number;
  /** Retries already made when this failure happened (0 on the first failure). */
  attempt: number;
  maxAttempts: number;
}
