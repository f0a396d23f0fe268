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

/** Discord's 400 / 50035 with the error at `path`: a field, a list (e.g. ["0", "name"]), or [] for the body. */
export function invalidFormBody(path: string | string[], code: string, message: string): DiscordError {
  let errors: Json = { _errors: [{ code, message }] };
  for (const key of [path].flat().reverse()) errors = { [key]: errors };
  return new DiscordError(400, 50035, "Invalid Form Body", errors);
}
