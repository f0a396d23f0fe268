// Message reactions as the emulator keeps them: per message, per emoji, the users who reacted. The
// emulated guild has no custom emojis, so only Unicode emojis can be used.
import { DiscordError } from "./errors.js";
import type { EmulatorMessage, EmulatorState, Json } from "./state.js";

/** Discord's cap on distinct emojis on one message. */
export const MAX_REACTIONS = 20;

/** The emoji a route names (decoded), or Discord's 400 / 10014 when it is not a Unicode emoji. */
function unicodeEmoji(raw: string): string {
  const emojiOnly = /^[\p{Extended_Pictographic}\p{Emoji_Component}]+$/u.test(raw);
  // Emoji_Component also holds "#", "*" and the digits, which alone are not emojis.
  const beyondAscii = [...raw].some((c) => (c.codePointAt(0) ?? 0) > 0x7f);
  if (!emojiOnly || !beyondAscii) throw new DiscordError(400, 10014, "Unknown Emoji");
  return raw;
}

/** `userId` reacts with `emoji`; reacting again with the same emoji changes nothing. */
export function addReaction(
  state: EmulatorState,
  channelId: string,
  messageId: string,
  emoji: string,
  userId: string,
): void {
  const message = state.message(channelId, messageId);
  const name = unicodeEmoji(emoji);
  const reactions = (message.reactions ??= new Map());
  const users = reactions.get(name);
  if (users?.has(userId)) return;
  if (!users && reactions.size >= MAX_REACTIONS) {
    throw new DiscordError(400, 30010, `Maximum number of reactions reached (${MAX_REACTIONS})`);
  }
  reactions.set(name, (users ?? new Set<string>()).add(userId));
  state.listener?.reactionChanged(message, name, userId, true);
}

/** `userId` takes back its `emoji` reaction; removing one that is not there is accepted, as Discord does. */
export function removeReaction(
  state: EmulatorState,
  channelId: string,
  messageId: string,
  emoji: string,
  userId: string,
): void {
  const message = state.message(channelId, messageId);
  const name = unicodeEmoji(emoji);
  const users = message.reactions?.get(name);
  if (!users?.delete(userId)) return;
  if (users.size === 0) message.reactions?.delete(name);
  state.listener?.reactionChanged(message, name, userId, false);
}

/** A message's `reactions` as `viewerId` reads them (`me`: whether the viewer is among the reactors). */
export function reactionsJson(message: EmulatorMessage, viewerId: string): Json[] {
  return [...(message.reactions ?? new Map<string, Set<string>>())].map(([name, users]) => ({
    emoji: { id: null, name },
    count: users.size,
    count_details: { burst: 0, normal: users.size },
    burst_colors: [],
    me_burst: false,
    me: users.has(viewerId),
  }));
}
