import pg from "pg";

/**
 * A connection that only shows this process is alive: it runs no query once open, so nothing closes it
 * but the process's death or a cut network, and the server ends its backend at once then. The lease
 * records that backend: others that no longer see it take the actors over at their next poll, not
 * when the lease lapses.
 */
export class Presence {
  private open: Promise<{ client: pg.Client; pid: number }> | undefined;

  constructor(private readonly config: pg.ClientConfig) {}

  /** Whether it is closed (or not yet open): to the others, this process looks dead until it renews. */
  get closed(): boolean {
    return this.open === undefined;
  }

  /** The connection's backend pid, connecting again when it was closed. */
  async backend(): Promise<number> {
    this.open ??= this.connect();
    return (await this.open).pid;
  }

  /** Closes the connection without a goodbye, as a killed process would: a silent network never answers one. */
  async close(): Promise<void> {
    const open = this.open;
    this.open = undefined;
    (await open?.catch(() => undefined))?.client.connection.stream.destroy();
  }

  private connect(): Promise<{ client: pg.Client; pid: number }> {
    const client = new pg.Client(this.config);
    const opening = (async () => {
      try {
        await client.connect();
        const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
        // An idle session timeout (PostgreSQL 14+) would end it while the process lives.
        await client.query("SET idle_session_timeout = 0").catch(() => undefined);
        return { client, pid: rows[0]?.pid ?? 0 };
      } catch (error) {
        await client.end().catch(() => undefined);
        throw error;
      }
    })();
    const gone = () => {
      if (this.open === opening) this.open = undefined;
    };
    client.on("error", gone).on("end", gone);
    opening.catch(gone);
    return opening;
  }
}
