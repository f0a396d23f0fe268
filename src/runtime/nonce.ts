import { createHash } from "node:crypto";

/** Discord's limit on a message nonce. */
export const MAX_NONCE_LENGTH = 25;

/** A stable digest of the machine's nonce key: a send re-run after a restart posts once. */
export function discordNonce(nonceKey: string): string {
  return createHash("sha256").update(nonceKey).digest("base64url").slice(0, MAX_NONCE_LENGTH);
}
