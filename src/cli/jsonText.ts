// `status --json` at a million actors outgrows V8's longest string, so the text is made in pieces. Hand-written:
// it must match JSON.stringify(value, null, 2) byte for byte (users parse today's output).

/**
 * `JSON.stringify(value, null, 2)` of plain data (no toJSON, no undefined in arrays) in pieces: containers
 * less than `depth` deep member by member, deeper ones whole (for `status`: one actor's row a piece).
 */
export function* jsonPieces(value: unknown, depth = 2, indent = ""): Generator<string> {
  if (depth === 0 || typeof value !== "object" || value === null) {
    // A JSON string holds no raw newline, so every "\n" here starts a line to indent.
    yield JSON.stringify(value, null, 2).replaceAll("\n", `\n${indent}`);
    return;
  }
  const isArray = Array.isArray(value);
  const members = Object.entries(value).filter(([, member]) => member !== undefined);
  for (const [i, [key, member]] of members.entries()) {
    yield `${i > 0 ? "," : isArray ? "[" : "{"}\n${indent}  ${isArray ? "" : `${JSON.stringify(key)}: `}`;
    yield* jsonPieces(member, depth - 1, `${indent}  `);
  }
  const close = isArray ? "]" : "}";
  yield members.length === 0 ? (isArray ? "[]" : "{}") : `\n${indent}${close}`;
}

/** What `--json` prints: the text of `JSON.stringify(value, null, 2)` and a newline, in pieces. */
export function* jsonDocument(value: unknown): Generator<string> {
  yield* jsonPieces(value);
  yield "\n";
}
