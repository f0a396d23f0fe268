// Discord's error answers, as the emulator's state and routes throw them.

import type { Json } from "./state.js";

/** An error the REST layer turns into a Discord JSON error body. */
export class DiscordError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly errors?: Json,
  ) {
    super(message);
    this.name = "DiscordError";
  }
}

export const unknownChannel = (): DiscordError => new DiscordError(404, 10003, "Unknown Channel");
export const unknownMessage = (): DiscordError => new DiscordError(404, 10008, "Unknown Message");
export const missingPermissions = (): DiscordError => new DiscordError(403, 50013, "Missing Permissions");

export function invalidFormBody(field: string, code: string, message: string): DiscordError {
  return new DiscordError(400, 50035, "Invalid Form Body", { [field]: { _errors: [{ code, message }] } });
}
