import { FakeDiscord, type SentMessage } from "../runtimeFakes.js";
import { currentGeneration } from "./generations.js";

/**
 * FakeDiscord that notes when (on the virtual clock) each message was first posted. A killed process
 * posts nothing: its calls never settle.
 */
export class TimedDiscord extends FakeDiscord {
  private readonly postedAt = new Map<string, number>();

  constructor(private readonly now: () => number) {
    super();
  }

  override async sendMessage(p: Omit<SentMessage, "messageId">) {
    if (currentGeneration()?.dead === true) return new Promise<never>(() => undefined);
    const sent = await super.sendMessage(p);
    if (!this.postedAt.has(sent.messageId)) this.postedAt.set(sent.messageId, this.now());
    return sent;
  }

  override async createThread(p: Parameters<FakeDiscord["createThread"]>[0]) {
    if (currentGeneration()?.dead === true) return new Promise<never>(() => undefined);
    return super.createThread(p);
  }

  timeOf(messageId: string): number | undefined {
    return this.postedAt.get(messageId);
  }
}
