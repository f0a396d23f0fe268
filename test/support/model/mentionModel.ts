/** The mention lifecycle settings the model follows. */
export interface LifecycleSettings {
  responseTimeoutMs: number;
  urgentResponseTimeoutMs: number;
  maxAttempts: number;
}

export type MentionStatus = "pending" | "reminded" | "responded" | "escalated";

/** A reminder or escalation the runtime owes, or has posted, and when. */
export interface Delivery {
  kind: "reminder" | "escalation";
  /** The attempt count the post shows: `[리마인더 {attempts}/…]`, `({attempts}회 시도…)`. */
  attempts: number;
  at: number;
}

/** An acknowledged mention: a `discordSend` the runtime answered `sent`. */
export interface ModelMention {
  id: string;
  threadId: string;
  targetAgentId: string;
  /** The request text, unique per send: reminders quote it. */
  text: string;
  urgent: boolean;
  sentAt: number;
  status: MentionStatus;
  attempts: number;
  /** When the next reminder or the escalation is due; none once the mention ended. */
  nextDueAt: number | undefined;
  delivered: Delivery[];
}

type OpenMention = ModelMention & { nextDueAt: number };

/** A message in a thread: from the target's bot (its agent id) or from anyone else (undefined). */
interface Message {
  threadId: string;
  authorAgentId: string | undefined;
  at: number;
}

/**
 * The reference model: what the runtime acknowledged and what it owes. The original mention is
 * attempt 1; each timeout counts from the latest delivery; while attempts < maxAttempts a timeout
 * posts a reminder (attempts += 1), the one after posts the escalation and ends the mention; an
 * answer from the target's bot in the thread ends every open mention to it there.
 */
export class MentionModel {
  readonly mentions: ModelMention[] = [];

  constructor(private readonly settings: LifecycleSettings) {}

  acknowledge(p: {
    id: string;
    threadId: string;
    targetAgentId: string;
    text: string;
    urgent: boolean;
    at: number;
  }) {
    this.mentions.push({
      ...p,
      sentAt: p.at,
      status: "pending",
      attempts: 1,
      nextDueAt: p.at + this.timeoutOf(p),
      delivered: [],
    });
  }

  /** The target's bot (or anyone else: `authorAgentId` undefined) wrote in the thread at `at`. */
  message(p: Message): void {
    for (const m of this.answerable(p)) this.end(m, "responded");
  }

  /**
   * The message of `message()` was never acknowledged (the process died handling it): each mention it
   * would end may or may not have recorded it; `recorded` says which did, as the next process reports.
   */
  unacknowledgedMessage(p: Message, recorded: (id: string) => boolean): void {
    for (const m of this.answerable(p)) if (recorded(m.id)) this.end(m, "responded");
  }

  /** The runtime runs until `time`: everything due by then fires at its due time, in order. */
  advanceTo(time: number): void {
    for (let next = this.nextDue(); next !== undefined && next.nextDueAt <= time; next = this.nextDue()) {
      this.fire(next, next.nextDueAt);
    }
  }

  /** A runtime starts at `time` after being down: each overdue mention fires once, now. */
  startAt(time: number): void {
    for (const m of this.open()) if (m.nextDueAt <= time) this.fire(m, time);
  }

  /** When the next reminder or escalation is due, if any is owed. */
  soonestDue(): number | undefined {
    return this.nextDue()?.nextDueAt;
  }

  private fire(m: ModelMention, at: number): void {
    if (m.attempts < this.settings.maxAttempts) {
      m.delivered.push({ kind: "reminder", attempts: m.attempts, at });
      m.attempts += 1;
      m.status = "reminded";
      m.nextDueAt = at + this.timeoutOf(m);
    } else {
      m.delivered.push({ kind: "escalation", attempts: m.attempts, at });
      this.end(m, "escalated");
    }
  }

  private answerable(p: Message): OpenMention[] {
    return this.open().filter(
      (m) => m.threadId === p.threadId && m.targetAgentId === p.authorAgentId && p.at >= m.sentAt,
    );
  }

  private end(m: ModelMention, status: "responded" | "escalated"): void {
    m.status = status;
    m.nextDueAt = undefined;
  }

  private nextDue(): OpenMention | undefined {
    return this.open().reduce<OpenMention | undefined>(
      (soonest, m) => (soonest === undefined || m.nextDueAt < soonest.nextDueAt ? m : soonest),
      undefined,
    );
  }

  private open(): OpenMention[] {
    return this.mentions.filter((m): m is OpenMention => m.nextDueAt !== undefined);
  }

  private timeoutOf(m: { urgent: boolean }): number {
    return m.urgent ? this.settings.urgentResponseTimeoutMs : this.settings.responseTimeoutMs;
  }
}
