import { A2AError } from "../errors/A2AError.js";

/** An unusable argument: the message names the function, the parameter and what was received. */
export class InvalidInputError extends A2AError {
  override readonly code = "INVALID_INPUT";
  override readonly name = "InvalidInputError";

  constructor(
    readonly fn: string,
    readonly param: string,
    readonly expected: string,
    readonly received: unknown,
  ) {
    super(`${fn}: ${param} ${reasonOf(expected, received)}`);
  }

  /** What is wrong, without the function and parameter: "must be …, got …". */
  get reason(): string {
    return reasonOf(this.expected, this.received);
  }
}

function reasonOf(expected: string, received: unknown): string {
  return `must be ${expected}, got ${describe(received)}`;
}

function describe(value: unknown): string {
  if (typeof value === "string")
    return value.length > 40 ? `a ${value.length}-char string` : JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || value == null) return String(value);
  return Array.isArray(value) ? "an array" : `a ${typeof value}`;
}

/** Text parameters are forgiving: anything that is not a string is treated as absent. */
export function asText(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function requireWholeNumber(fn: string, param: string, value: unknown, min = 0): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    throw new InvalidInputError(fn, param, `a whole number ≥ ${min}`, value);
  }
  return value;
}

export function requireNonEmptyText(fn: string, param: string, value: unknown): string {
  if (typeof value !== "string" || value.trim() === "") {
    throw new InvalidInputError(fn, param, "a non-empty string", value);
  }
  return value;
}

export function requireObject<T extends object>(fn: string, param: string, value: T | null | undefined): T {
  if (typeof value !== "object" || value === null) throw new InvalidInputError(fn, param, "an object", value);
  return value;
}

/** Cuts to at most `max` UTF-16 units without splitting a surrogate pair. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end);
}
