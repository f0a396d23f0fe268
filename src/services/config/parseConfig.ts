import { z } from "zod";
import { type A2AConfig, A2AConfigSchema } from "./A2AConfigSchema.js";

/** One thing wrong with a config: where (a dotted path, the key included) and why. */
export interface ConfigProblem {
  path: string;
  message: string;
}

export class A2AConfigError extends Error {
  override readonly name = "A2AConfigError";

  constructor(readonly problems: ConfigProblem[]) {
    super(
      `invalid a2a-statecharts config:\n${problems.map((p) => `  - ${p.path}: ${p.message}`).join("\n")}`,
    );
  }
}

/** Validates a user config and fills in every default; `undefined` yields the defaults. */
export function parseConfig(input?: unknown): A2AConfig {
  const result = A2AConfigSchema.safeParse(input === undefined ? {} : input, { reportInput: true });
  if (result.success) return result.data;
  throw new A2AConfigError(result.error.issues.flatMap(describeIssue));
}

function describeIssue(issue: z.core.$ZodIssue): ConfigProblem[] {
  const path = issue.path.map(String);
  const where = (p: string[]) => p.join(".") || "(config)";
  if (issue.code === "unrecognized_keys") {
    const known = objectKeysAt(path);
    const hint = known.length > 0 ? ` (allowed here: ${known.join(", ")})` : "";
    return issue.keys.map((key) => ({ path: where([...path, key]), message: `unknown key${hint}` }));
  }
  const allowed = describeAllowed(schemaAt(path));
  const message = allowed ? `must be ${allowed}, got ${received(issue.input)}` : issue.message;
  return [{ path: where(path), message }];
}

/** The schema of the value at `path`, through defaults, optionals and records. */
function schemaAt(path: string[]): z.ZodType | undefined {
  let node: z.ZodType | undefined = A2AConfigSchema;
  for (const key of path) {
    node = unwrap(node);
    if (node instanceof z.ZodObject) node = (node.shape as Record<string, z.ZodType>)[key];
    else if (node instanceof z.ZodRecord) node = node.valueType as z.ZodType;
    else if (node instanceof z.ZodArray) node = node.element as z.ZodType;
    else return undefined;
  }
  return unwrap(node);
}

function unwrap(node: z.ZodType | undefined): z.ZodType | undefined {
  let current = node;
  while (
    current instanceof z.ZodDefault ||
    current instanceof z.ZodPrefault ||
    current instanceof z.ZodOptional
  ) {
    current = current.unwrap() as z.ZodType;
  }
  return current;
}

function objectKeysAt(path: string[]): string[] {
  const node = schemaAt(path);
  return node instanceof z.ZodObject ? Object.keys(node.shape) : [];
}

function describeAllowed(node: z.ZodType | undefined): string | undefined {
  if (node instanceof z.ZodNumber) {
    const min = node.minValue ?? 0;
    const kind = node.isInt ? "a whole number" : "a number";
    // `.positive()` reports minValue 0 exclusive; present it as the integer bound the user can type.
    const low = node.isInt && min === 0 && isExclusivePositive(node) ? 1 : min;
    const max = node.maxValue;
    return max != null && max < Number.MAX_SAFE_INTEGER
      ? `${kind} from ${low} to ${max}`
      : `${kind} ≥ ${low}`;
  }
  if (node instanceof z.ZodBoolean) return "true or false";
  if (node instanceof z.ZodString) return "a non-empty string";
  if (node instanceof z.ZodArray) return "an array of non-empty strings";
  if (node instanceof z.ZodObject || node instanceof z.ZodRecord) return "an object";
  return undefined;
}

function isExclusivePositive(node: z.ZodNumber): boolean {
  return node.safeParse(0).success === false;
}

function received(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "object") return "an object";
  return String(value);
}
