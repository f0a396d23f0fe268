// Discord's error answers, as the emulator's state and routes throw them.
import { A2AError } from "../../errors/A2AError.js";
import type { Json } from "./state.js";

/** A Discord error answer: REST sends it as Discord's JSON error body; `postAsUser` throws it. */
export class DiscordError extends A2AError {
  override readonly code = "DISCORD_EMULATOR_ERROR";
  override readonly name = "DiscordError";

  constructor(
    readonly status: number,
    /** Discord's JSON error code (10003 Unknown Channel, 50013 Missing Permissions, …). */
    readonly discordCode: number,
    message: string,
    readonly errors?: Json,
  ) {
    super(message);
  }
}

export const unknownChannel = (): DiscordError => new DiscordError(404, 10003, "Unknown Channel");
export const unknownMessage = (): DiscordError => new DiscordError(404, 10008, "Unknown Message");
export const missingPermissions = (): DiscordError => new DiscordError(403, 50013, "Missing Permissions");

export function invalidFormBody(field: string, code: string, message: string): DiscordError {
  return new DiscordError(400, 50035, "Invalid Form Body", { [field]: { _errors: [{ code, message }] } });
}
