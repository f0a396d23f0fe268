import { A2AError } from "../errors/A2AError.js";

/**
 * A runtime method was called that needs a port the runtime was created without: `sessionsSend` needs
 * `gateway`, `discordSend` needs `discord`. Thrown at the call, before any actor starts: a missing
 * option is a setup mistake, not a gateway or Discord failure to retry.
 */
export class MissingPortError extends A2AError {
  override readonly code = "MISSING_PORT";
  override readonly name = "MissingPortError";

  constructor(
    readonly method: "sessionsSend" | "discordSend",
    readonly option: "gateway" | "discord",
  ) {
    super(
      `A2ARuntime.${method} needs a ${option === "gateway" ? "GatewayPort" : "DiscordPort"}: ` +
        `pass it as createA2ARuntime({ ${option} })`,
    );
  }
}
