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

/** Adds or takes back `userId`'s `emoji` reaction; as on Discord, a no-op when already so. */
export function react(
  state: EmulatorState,
  r: { channelId: string; messageId: string; emoji: string; userId: string },
  add: boolean,
): void {
  const message = state.message(r.channelId, r.messageId);
  const name = unicodeEmoji(r.emoji);
  const reactions = (message.reactions ??= new Map());
  const users = reactions.get(name);
  if (add === (users?.has(r.userId) ?? false)) return;
  if (add && !users && reactions.size >= MAX_REACTIONS) {
    throw new DiscordError(400, 30010, `Maximum number of reactions reached (${MAX_REACTIONS})`);
  }
  if (add) reactions.set(name, (users ?? new Set<string>()).add(r.userId));
  else if (users?.delete(r.userId) && users.size === 0) reactions.delete(name);
  state.listener?.reactionChanged(message, name, r.userId, add);
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
