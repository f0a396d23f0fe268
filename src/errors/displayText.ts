/**
 * Any value as display text, for messages and prompts: never throws (symbols and prototype-less
 * objects make `String()` and template literals throw a TypeError).
 */
export function displayText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value instanceof Error) return value.message;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint")
    return String(value);
  if (typeof value === "symbol") return value.description ?? "";
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
