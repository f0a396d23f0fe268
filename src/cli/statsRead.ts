import { readFile, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { listLogFiles } from "../runtime/EventLog.js";
import { StateDirNotFoundError } from "../persistence/index.js";
import { type A2AEvent, A2AEventSchema } from "../policies/index.js";

/** The event log as `stats` read it: events oldest first, and what it had to skip. */
export type EventLogReading = Awaited<ReturnType<typeof readEventLog>>;

/** How many problems the report lists; the counts cover them all. */
const PROBLEMS_SHOWN = 20;

/**
 * Reads `coordination-events.ndjson` and its rotated files, read-only and without the runtime's lock,
 * so it can run beside a gateway that is appending. Bad lines are counted, never fatal.
 */
export async function readEventLog(stateDir: string) {
  const dir = resolve(stateDir);
  const isDir = await stat(dir).then(
    (found) => found.isDirectory(),
    (error: unknown) => {
      if ((error as { code?: unknown }).code !== "ENOENT") throw error;
      throw new StateDirNotFoundError(dir, "does not exist (pass --state-dir, the runtime's stateDir)");
    },
  );
  if (!isDir) throw new StateDirNotFoundError(dir, "is not a directory");

  const files = await listLogFiles(dir);
  const reading = {
    stateDir: dir,
    files, // oldest first: rotated ones (`.N` … `.1`), then the live file
    events: [] as A2AEvent[],
    corrupt: 0, // lines that are not JSON or not a known event
    partial: 0, // a last line without its newline: an append still being written, or cut short
    problems: [] as Array<{ file: string; line: number; problem: string }>, // line is 1-based
  };
  const note = (problem: (typeof reading.problems)[number]) => {
    if (reading.problems.length < PROBLEMS_SHOWN) reading.problems.push(problem);
  };
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      // Rotated away between the listing and the read: its events are in the next file.
      if ((error as { code?: unknown }).code === "ENOENT") continue;
      throw error;
    }
    const lines = text.split("\n");
    const last = lines.pop() ?? "";
    if (last.trim() !== "") {
      reading.partial += 1;
      note({
        file,
        line: lines.length + 1,
        problem: "no newline at the end: a write in progress or cut short",
      });
    }
    lines.forEach((line, i) => {
      if (line.trim() === "") return;
      const problem = parseLine(line, reading.events);
      if (problem === undefined) return;
      reading.corrupt += 1;
      note({ file, line: i + 1, problem });
    });
  }
  // Rotation keeps order across files; within a file, appends are in order too. Sorting by ts makes
  // the order independent of both (a stable sort keeps equal timestamps as written).
  reading.events.sort((a, b) => a.ts - b.ts);
  return reading;
}

function parseLine(line: string, into: A2AEvent[]): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return "not JSON";
  }
  const parsed = A2AEventSchema.safeParse(json);
  if (!parsed.success) {
    const type = (json as { type?: unknown } | null)?.type;
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`;
    return `not an A2A event${typeof type === "string" ? ` (type ${type})` : ""}${where}: ${issue?.message ?? "invalid"}`;
  }
  into.push(parsed.data);
  return undefined;
}
