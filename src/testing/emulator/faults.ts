// Fault injection for the Discord emulator's REST API. A fault matches requests by method and path (the
// part after /api/v10) and fires for the next `times` matching requests (default 1).

/** A failure the emulator gives the next matching requests instead of an answer. */
export type EmulatorFault =
  /** 429 with Retry-After; `global: true` sends X-RateLimit-Global (a global limit), else a bucket limit. */
  | (FaultMatch & { kind: "rateLimit"; retryAfterMs?: number; global?: boolean })
  /** A 5xx answer (default 500). */
  | (FaultMatch & { kind: "serverError"; status?: number })
  /** The request is never answered (until `close()`); the client's own timeout fires. */
  | (FaultMatch & { kind: "timeout" })
  /** The connection is reset without an answer (ECONNRESET / "other side closed"). */
  | (FaultMatch & { kind: "reset" });

/** Which requests a fault applies to, and how many times. */
export interface FaultMatch {
  /** HTTP method, case-insensitive; any when omitted. */
  method?: string;
  /** Path after /api/v10: a substring or a RegExp; any when omitted. */
  path?: string | RegExp;
  /** Only requests made by this user's token; any when omitted. */
  userId?: string;
  /** How many matching requests fail (default 1). */
  times?: number;
}

export class FaultQueue {
  private armed: Array<{ fault: EmulatorFault; remaining: number }> = [];

  add(fault: EmulatorFault): void {
    this.armed.push({ fault, remaining: fault.times ?? 1 });
  }

  clear(): void {
    this.armed = [];
  }

  /** Takes (and counts down) the first armed fault that matches this request. */
  take(method: string, path: string, userId: string | null): EmulatorFault | null {
    const index = this.armed.findIndex(({ fault }) => matches(fault, method, path, userId));
    const armed = this.armed[index];
    if (!armed) return null;
    armed.remaining -= 1;
    if (armed.remaining <= 0) this.armed.splice(index, 1);
    return armed.fault;
  }
}

function matches(fault: FaultMatch, method: string, path: string, userId: string | null): boolean {
  if (fault.method !== undefined && fault.method.toUpperCase() !== method.toUpperCase()) return false;
  if (fault.userId !== undefined && fault.userId !== userId) return false;
  if (fault.path === undefined) return true;
  return typeof fault.path === "string" ? path.includes(fault.path) : fault.path.test(path);
}
