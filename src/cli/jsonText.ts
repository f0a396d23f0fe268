// `status --json` at a million actors: JSON.stringify of the whole report would be one string longer than
// V8 allows (RangeError: Invalid string length). The same text is made here in pieces instead. Written
// rather than taken from a streaming-JSON package: it must match JSON.stringify(value, null, 2) byte for
// byte (users parse today's output), it is 50 lines, and the installed package is at its size limit.

/**
 * The text of `JSON.stringify(value, null, 2)`, character for character, in pieces: objects and arrays
 * nested less than `depth` levels deep are written member by member, deeper ones whole, so no piece is
 * longer than one member at that depth (for a `status` report: one actor's row).
 */
export function* jsonPieces(value: unknown, depth = 2): Generator<string> {
  yield* members(jsonValue(value, ""), "", depth);
}

/** JSON.stringify's view of a member: what its toJSON returns (called with the member's key, as it does). */
function jsonValue(value: unknown, key: string): unknown {
  const toJSON = (value as { toJSON?: unknown } | null | undefined)?.toJSON;
  return typeof toJSON === "function" ? (toJSON as (key: string) => unknown).call(value, key) : value;
}

/** An object or array to write member by member (a boxed primitive is written as its value). */
function isContainer(json: unknown): json is object {
  return (
    typeof json === "object" &&
    json !== null &&
    !(json instanceof Number || json instanceof String || json instanceof Boolean)
  );
}

/** `json` (toJSON already applied) as JSON.stringify(json, null, 2) writes it at `indent`. */
function* members(json: unknown, indent: string, depth: number): Generator<string> {
  if (depth === 0 || !isContainer(json)) {
    // A JSON string holds no raw newline, so every "\n" here starts a line to indent.
    yield (JSON.stringify(json, null, 2) ?? "null").replaceAll("\n", `\n${indent}`);
    return;
  }
  const inner = `${indent}  `;
  const isArray = Array.isArray(json);
  const keys = isArray ? indices(json.length) : Object.keys(json);
  let opened = false;
  for (const k of keys) {
    const member = jsonValue((json as Record<string, unknown>)[k], k);
    // What JSON.stringify cannot write is left out of an object (and is null in an array).
    if (!isArray && (member === undefined || typeof member === "function" || typeof member === "symbol"))
      continue;
    yield `${opened ? "," : isArray ? "[" : "{"}\n${inner}${isArray ? "" : `${JSON.stringify(k)}: `}`;
    opened = true;
    yield* members(member, inner, depth - 1);
  }
  yield opened ? `\n${indent}${isArray ? "]" : "}"}` : isArray ? "[]" : "{}";
}

/** An array's indices as keys, holes included (JSON.stringify writes a hole as null). */
function* indices(length: number): Generator<string> {
  for (let i = 0; i < length; i++) yield String(i);
}

/** What `--json` prints: the text of `JSON.stringify(value, null, 2)` and a newline, in pieces. */
export function* jsonDocument(value: unknown): Generator<string> {
  yield* jsonPieces(value);
  yield "\n";
}
