import { A2AError } from "../../errors/A2AError.js";
import { cutText } from "../InvalidInputError.js";
import { type A2AEvent, A2AEventSchema, type A2AEventType } from "./A2AEventSchema.js";

export type A2AEventListener = (event: A2AEvent) => void;

/** A listener's selection: one type, a dotted prefix ending in `.*` (`a2a.collaborate.*`), or `*`. */
export type A2AEventPattern = A2AEventType | `${string}.*` | "*";

/** An emitted value that is not a valid A2A event; nothing was delivered. */
export class InvalidEventError extends A2AError {
  override readonly code = "INVALID_EVENT";
  override readonly name = "InvalidEventError";
}

/** Validates each event, then hands it to matching listeners in order; a throwing one cannot stop the log. */
export class EventBus {
  private readonly listeners = new Set<{ pattern: A2AEventPattern; listener: A2AEventListener }>();

  constructor(
    private readonly onListenerError: (error: unknown, event: A2AEvent) => void = reportListenerError,
  ) {}

  subscribe(pattern: A2AEventPattern, listener: A2AEventListener): () => void {
    const entry = { pattern, listener };
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  /** Validates and delivers an event; returns the parsed event, or throws naming what is wrong. */
  emit(event: A2AEvent): A2AEvent {
    const parsed = A2AEventSchema.safeParse(event);
    if (!parsed.success) {
      const rawType = (event as { type?: unknown } | undefined)?.type;
      const type = typeof rawType === "string" ? cutText(rawType, 60) : "?";
      const problems = parsed.error.issues.map((i) =>
        cutText(`${i.path.join(".") || "(event)"}: ${i.message}`, 200),
      );
      throw new InvalidEventError(`invalid ${type} event: ${problems.join("; ")}`);
    }
    for (const { pattern, listener } of [...this.listeners]) {
      if (!matches(pattern, parsed.data.type)) continue;
      try {
        listener(parsed.data);
      } catch (error) {
        this.onListenerError(error, parsed.data);
      }
    }
    return parsed.data;
  }

  get listenerCount(): number {
    return this.listeners.size;
  }
}

function matches(pattern: A2AEventPattern, type: string): boolean {
  if (pattern === "*") return true;
  if (pattern.endsWith(".*")) return type.startsWith(pattern.slice(0, -1));
  return pattern === type;
}

function reportListenerError(error: unknown, event: A2AEvent): void {
  console.error(`a2a-statecharts: a listener of ${event.type} threw`, error);
}
