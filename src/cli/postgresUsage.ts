// The checks of `status --postgres URL [--schema NAME]` that need no connection and no pg package.
import { SCHEMA_NAME } from "../persistence/postgres/migrations.js";

/**
 * What is wrong with `--postgres URL [--schema NAME]` as typed, or undefined. Needs no pg, so a usage
 * error is told as one even where pg is not installed.
 */
export function postgresUsageError(connectionString: string, schema: string | undefined): string | undefined {
  if (connectionString.trim() === "") {
    return "--postgres needs a connection string (postgresql://user@host:5432/database), got an empty string";
  }
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    return `--schema must be a lower-case SQL name (letters, digits, _; at most 63), got ${JSON.stringify(schema)}`;
  }
  return undefined;
}
