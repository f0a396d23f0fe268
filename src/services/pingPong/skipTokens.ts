import { asText } from "../InvalidInputError.js";

export const REPLY_SKIP_TOKEN = "REPLY_SKIP";
export const ANNOUNCE_SKIP_TOKEN = "ANNOUNCE_SKIP";

// The token alone, or followed by whitespace or one punctuation mark: `REPLY_SKIP.` is a skip,
// `REPLY_SKIPPED` and `REPLY_SKIP_NOW` are not.
const startsWithToken = (token: string) => new RegExp(`^${token}(?:$|[\\s.,!?;:])`, "i");
const REPLY_SKIP = startsWithToken(REPLY_SKIP_TOKEN);
const ANNOUNCE_SKIP = startsWithToken(ANNOUNCE_SKIP_TOKEN);

export function isReplySkip(text?: string): boolean {
  return REPLY_SKIP.test(asText(text)?.trim() ?? "");
}

export function isAnnounceSkip(text?: string): boolean {
  return ANNOUNCE_SKIP.test(asText(text)?.trim() ?? "");
}
