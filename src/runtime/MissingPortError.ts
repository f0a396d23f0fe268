import { A2AError } from "../errors/A2AError.js";

/** `sessionsSend` without a `gateway`, `discordSend` without `discord`: a setup mistake, not retried. */
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
