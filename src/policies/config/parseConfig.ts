import { z } from "zod";
import { A2AError } from "../../errors/A2AError.js";
import { cutText } from "../InvalidInputError.js";
import { type A2AConfig, A2AConfigSchema } from "./A2AConfigSchema.js";
import { DISCORD_ID_TEXT } from "./discordId.js";
import { applyLegacyKeys, isPlainObject } from "./legacyKeys.js";

/** One thing wrong with a config: where (a dotted path, the key included) and why. */
export interface ConfigProblem {
  path: string;
  message: string;
}

/** A config `parseConfig` refused; `problems` lists each one, and the message names each path. */
export class A2AConfigError extends A2AError {
  override readonly code = "INVALID_CONFIG";
  override readonly name = "A2AConfigError";

  constructor(readonly problems: ConfigProblem[]) {
    super(
      `invalid a2a-statecharts config:\n${problems.map((p) => `  - ${p.path}: ${p.message}`).join("\n")}`,
    );
  }
}

export interface ParseConfigOptions {
  /** Told once of each earlier configuration's key that is moved or ignored, and why; unset, silent. */
  onWarning?: (message: string) => void;
}

/**
 * Validates a user config and fills in every default (`undefined`: all defaults). Throws an A2AConfigError
 * naming the path of every unknown key, bad value and setting contradicting another.
 */
export function parseConfig(input?: unknown, options: ParseConfigOptions = {}): A2AConfig {
  if (input !== undefined && !isPlainObject(input)) {
    throw new A2AConfigError([
      { path: "(config)", message: `must be a plain object, got ${received(input)}` },
    ]);
  }
  const legacy = applyLegacyKeys(input ?? {}, options.onWarning ?? (() => {}));
  const result = A2AConfigSchema.safeParse(legacy.config, { reportInput: true });
  if (result.success && legacy.problems.length === 0) {
    return result.data;
  }
  // A moved value's problems name the path the user wrote, not the one it was moved to.
  const userPath = (path: string) => {
    const move = legacy.moves.find(({ to }) => path === to || path.startsWith(`${to}.`));
    return move === undefined ? path : move.from + path.slice(move.to.length);
  };
  const problems = (result.error?.issues ?? []).flatMap(describeIssue);
  throw new A2AConfigError([
    ...legacy.problems,
    ...problems.map((problem) => ({ ...problem, path: userPath(problem.path) })),
  ]);
}

function describeIssue(issue: z.core.$ZodIssue): ConfigProblem[] {
  const path = issue.path.map((key) => cutText(String(key), MAX_ECHO));
  const where = (p: string[]) => p.join(".") || "(config)";
  if (issue.code === "invalid_key") {
    return [
      {
        path: where(path.slice(0, -1)),
        message: `has a key ${received(issue.input)}: keys must be non-empty ids`,
      },
    ];
  }
  if (issue.code === "unrecognized_keys") {
    const known = objectKeysAt(path);
    const hint = known.length > 0 ? ` (allowed here: ${known.join(", ")})` : "";
    return issue.keys.map((key) => ({
      path: where([...path, cutText(key, MAX_ECHO)]),
      message: `unknown key${hint}`,
    }));
  }
  // Refinements (a Discord id's format, settings that contradict each other) say what is wrong themselves.
  if (issue.code === "custom") return [{ path: where(path), message: issue.message }];
  if (issue.code === "invalid_format") {
    return [{ path: where(path), message: `${issue.message}, got ${received(issue.input)}` }];
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
  if (node instanceof z.ZodEnum) return `one of ${node.options.map((o) => JSON.stringify(o)).join(", ")}`;
  // The config's only pattern-checked strings are Discord ids.
  if (node instanceof z.ZodString) return node.format === "regex" ? DISCORD_ID_TEXT : "a non-empty string";
  if (node instanceof z.ZodArray) {
    const element = describeAllowed(node.element as z.ZodType);
    return element === DISCORD_ID_TEXT ? "an array of Discord ids" : "an array of non-empty strings";
  }
  if (node instanceof z.ZodObject || node instanceof z.ZodRecord) return "an object";
  return undefined;
}

function isExclusivePositive(node: z.ZodNumber): boolean {
  return node.safeParse(0).success === false;
}

// Echoes of the user's input are cut, so a megabyte-long key or value does not make a megabyte-long error.
const MAX_ECHO = 40;

function received(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string")
    return JSON.stringify(value.length > MAX_ECHO ? `${cutText(value, MAX_ECHO)}…` : value);
  if (typeof value === "object")
    return value.constructor?.name && value.constructor !== Object
      ? `a ${value.constructor.name}`
      : "an object";
  if (typeof value === "symbol" || typeof value === "function") return `a ${typeof value}`;
  return String(value);
}
