import type { z } from "zod";
import { A2AError } from "../errors/A2AError.js";

/** A machine was created with input it cannot run on; the message names the machine and each bad field. */
export class MachineInputError extends A2AError {
  override readonly code = "INVALID_MACHINE_INPUT";
  override readonly name = "MachineInputError";

  constructor(
    readonly machine: string,
    readonly problems: Array<{ path: string; message: string }>,
  ) {
    super(`${machine}: invalid input: ${problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`);
  }
}

/** Validates a machine's input with its zod schema, so a bad field fails at creation, by name. */
export function parseMachineInput<S extends z.ZodType>(
  machine: string,
  schema: S,
  input: unknown,
): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new MachineInputError(
    machine,
    result.error.issues.map((issue) => ({
      path: issue.path.map(String).join(".") || "(input)",
      message: issue.message.length > 200 ? `${issue.message.slice(0, 200)}…` : issue.message,
    })),
  );
}
