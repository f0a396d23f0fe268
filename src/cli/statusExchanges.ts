import { join } from "node:path";
import { readThreadExchanges, THREAD_STATE_DIR } from "../runtime/threadStatePersistence.js";
import type { ExchangeEndReason } from "../policies/collaboration/botExchange.js";
import { formatDuration } from "./textTable.js";

/** One thread's bot↔bot exchange, as `status --json` prints it. */
export interface ExchangeStatusRow {
  threadId: string;
  /** Messages it handled, its opening included: one agent run each. */
  handled: number;
  /** The most it may handle: 1 + maxPingPongTurns. */
  limit: number;
  /** Why it ended; null while it goes on. */
  endedBy: ExchangeEndReason | null;
  /** Its last handled message, or its end (ms since the epoch). */
  at: number;
  atIso: string;
}

/** The exchanges of the thread state on disk, read without changing anything. */
export async function collectExchanges(
  stateDir: string,
  onWarning: (problem: string) => void,
): Promise<ExchangeStatusRow[]> {
  const exchanges = await readThreadExchanges(stateDir, onWarning).catch((error: unknown) => {
    onWarning(
      `${join(stateDir, THREAD_STATE_DIR)}: ${error instanceof Error ? error.message : String(error)}`,
    );
    return [];
  });
  return exchanges
    .map(({ threadId, exchange }) => ({
      threadId,
      handled: exchange.handled,
      limit: exchange.limit,
      endedBy: exchange.endedBy ?? null,
      at: exchange.at,
      atIso: new Date(exchange.at).toISOString(),
    }))
    .sort((a, b) => Number(a.endedBy === null) - Number(b.endedBy === null) || b.at - a.at);
}

/** The exchanges as table rows, header first. */
export function exchangeTable(rows: readonly ExchangeStatusRow[], now: number): string[][] {
  return [
    ["THREAD", "HANDLED", "ENDED BY", "LAST ACTIVITY"],
    ...rows.map((r) => [
      r.threadId,
      `${r.handled}/${r.limit}`,
      r.endedBy ?? "(going on)",
      `${formatDuration(now - r.at)} ago`,
    ]),
  ];
}
