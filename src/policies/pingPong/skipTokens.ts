import { asText } from "../InvalidInputError.js";

/** What an agent replies, alone, to end a ping-pong: no more turns follow. */
export const REPLY_SKIP_TOKEN = "REPLY_SKIP";
/** What an agent replies, alone, to the announce step to post nothing. */
export const ANNOUNCE_SKIP_TOKEN = "ANNOUNCE_SKIP";

// The token alone, or followed by whitespace or one punctuation mark: `REPLY_SKIP.` is a skip,
// `REPLY_SKIPPED` and `REPLY_SKIP_NOW` are not.
const startsWithToken = (token: string) => new RegExp(`^${token}(?:$|[\\s.,!?;:])`, "i");
const REPLY_SKIP = startsWithToken(REPLY_SKIP_TOKEN);
const ANNOUNCE_SKIP = startsWithToken(ANNOUNCE_SKIP_TOKEN);

/** Whether a reply is the reply skip token (trimmed, any case, alone or followed by a space or `.,!?;:`). */
export function isReplySkip(text?: string): boolean {
  return REPLY_SKIP.test(asText(text)?.trim() ?? "");
}

/** Whether an announce reply is the announce skip token (as `isReplySkip` reads it). */
export function isAnnounceSkip(text?: string): boolean {
  return ANNOUNCE_SKIP.test(asText(text)?.trim() ?? "");
}
