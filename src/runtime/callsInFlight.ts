import type { GatewayPort } from "./ports.js";

/** The gateway calls under way, for idle(): ungated ones are not among the host's side effects. */
export class CallsInFlight {
  private readonly calls = new Set<Promise<unknown>>();

  /** `port` with each call counted until it settles; a call that throws rejects. */
  gateway(port: GatewayPort): GatewayPort {
    return {
      agent: (p) => this.track(() => port.agent(p)),
      agentWait: (p) => this.track(() => port.agentWait(p)),
      readLatestAssistantReply: (p) => this.track(() => port.readLatestAssistantReply(p)),
    };
  }

  /** Calls under way now. */
  get size(): number {
    return this.calls.size;
  }

  /** Waits until no call is under way; resolves with whether there was one to wait for. */
  async settled(): Promise<boolean> {
    if (this.calls.size === 0) return false;
    while (this.calls.size > 0) await Promise.allSettled([...this.calls]);
    return true;
  }

  private track<T>(call: () => Promise<T>): Promise<T> {
    // Called a microtask later, so a port that throws instead of rejecting rejects with what it threw.
    const promise = Promise.resolve().then(call);
    this.calls.add(promise);
    const done = () => this.calls.delete(promise);
    promise.then(done, done);
    return promise;
  }
}
