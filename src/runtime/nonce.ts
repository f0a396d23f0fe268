import { createHash } from "node:crypto";

/** Discord's limit on a message nonce. */
export const MAX_NONCE_LENGTH = 25;

/**
 * Discord's nonce for a send: a stable digest of the machine's nonce key (collaboration id, reminder
 * number…), so a send re-run after a restart carries the same nonce and Discord posts it once.
 */
export function discordNonce(nonceKey: string): string {
  return createHash("sha256").update(nonceKey).digest("base64url").slice(0, MAX_NONCE_LENGTH);
}
