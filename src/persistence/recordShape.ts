/**
 * The shape of a stored actor record, checked by hand rather than with a schema library: a restart
 * checks every stored record, and zod cost a durable host ~100 ms to import and ~140 ms for its first
 * pass over 10,000 records, against ~12 ms here. A test holds these rules to a zod schema of the same
 * record.
 */

/** The largest time `Date` accepts: later ones cannot name an archive day. */
export const MAX_TIME = 8_640_000_000_000_000;

const RECORD_FIELDS = new Set([
  "id",
  "machineId",
  "machineVersion",
  "snapshot",
  "delayed",
  "status",
  "updatedAt",
  "meta",
]);
const DELAYED_FIELDS = new Set(["id", "source", "target", "event", "dueAt", "cancellable"]);

const NAME = "a non-empty string";
const TIME = `a time in ms since the epoch (0 to ${MAX_TIME})`;

/** What is wrong with a JSON value as an actor record, each as "path: problem"; [] when it is one. */
export function recordProblems(value: unknown): string[] {
  const problems: string[] = [];
  const want = (ok: boolean, path: string, what: string, got: unknown) => {
    if (!ok) problems.push(`${path}: expected ${what}, got ${shown(got)}`);
  };
  if (!isPlainObject(value)) {
    want(false, "(record)", "an object", value);
    return problems;
  }
  unknownFields(value, RECORD_FIELDS, "(record)", problems);
  const { id, machineId, machineVersion, status, updatedAt, meta, delayed } = value;
  want(isName(id), "id", NAME, id);
  want(isName(machineId), "machineId", NAME, machineId);
  want(isCount(machineVersion), "machineVersion", "a whole number ≥ 0", machineVersion);
  // Read by its descriptor: a stored record's snapshot is a getter that parses it.
  const snapshot = Object.getOwnPropertyDescriptor(value, "snapshot");
  if (snapshot === undefined || (snapshot.get === undefined && snapshot.value === undefined))
    problems.push("snapshot: the snapshot is missing");
  want(
    status === "active" || status === "done" || status === "error",
    "status",
    '"active", "done" or "error"',
    status,
  );
  want(isTime(updatedAt), "updatedAt", TIME, updatedAt);
  want(meta === undefined || isPlainObject(meta), "meta", "an object", meta);
  if (delayed === undefined) return problems;
  if (!Array.isArray(delayed)) {
    want(false, "delayed", "an array", delayed);
    return problems;
  }
  delayed.forEach((entry: unknown, i) => {
    const at = `delayed.${i}`;
    if (!isPlainObject(entry)) return want(false, at, "an object", entry);
    unknownFields(entry, DELAYED_FIELDS, at, problems);
    const { event, cancellable } = entry;
    want(isName(entry.id), `${at}.id`, NAME, entry.id);
    want(isPath(entry.source), `${at}.source`, "an array of strings", entry.source);
    want(isPath(entry.target), `${at}.target`, "an array of strings", entry.target);
    if (isPlainObject(event)) want(isName(event.type), `${at}.event.type`, NAME, event.type);
    else want(false, `${at}.event`, "an object", event);
    want(isTime(entry.dueAt), `${at}.dueAt`, TIME, entry.dueAt);
    want(
      cancellable === undefined || cancellable === false,
      `${at}.cancellable`,
      "false or nothing",
      cancellable,
    );
  });
  return problems;
}

function unknownFields(value: Record<string, unknown>, fields: Set<string>, at: string, problems: string[]) {
  for (const key of Object.keys(value))
    if (!fields.has(key)) problems.push(`${at}: unknown field ${JSON.stringify(key)}`);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
const isName = (v: unknown) => typeof v === "string" && v !== "";
const isCount = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const isTime = (v: unknown) => typeof v === "number" && v >= 0 && v <= MAX_TIME;
const isPath = (v: unknown) => Array.isArray(v) && v.every((step) => typeof step === "string");

function shown(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "string")
    return value.length > 60 ? `${JSON.stringify(value.slice(0, 60))}…` : JSON.stringify(value);
  return String(value);
}
