// The inspector page's model: an actor hosted again as a new XState actor of the same id (a durable
// actor after a restart or a dormant spell) is shown as the one seen before, once that one no longer
// runs; two running actors of one id stay two.
import { describe, expect, it } from "vitest";
import { createActor, createMachine } from "xstate";
import { InspectorModel } from "../../src/inspector/InspectorModel.js";

const door = createMachine({
  id: "door",
  initial: "closed",
  states: { closed: { on: { OPEN: "open" } }, open: { on: { CLOSE: "closed" } } },
});

function watched() {
  const model = new InspectorModel(() => {});
  const start = (id: string) => createActor(door, { id, inspect: (e) => model.handle(e) }).start();
  const shown = (id: string) => model.hello().actors.filter((a) => a.id === id);
  return { model, start, shown };
}

describe("InspectorModel: an actor of an id seen before", () => {
  it("running beside it, is another actor", () => {
    const { start, shown } = watched();
    const first = start("front");
    const second = start("front");
    expect(shown("front").map((a) => a.sessionId)).toEqual([first.sessionId, second.sessionId]);
  });

  it("once the earlier one stopped, is shown as it: its session, its state, its events", () => {
    const { model, start, shown } = watched();
    const first = start("front");
    first.send({ type: "OPEN" });
    first.stop();
    const again = start("front");
    again.send({ type: "CLOSE" });
    again.send({ type: "OPEN" });
    expect(shown("front")).toEqual([
      expect.objectContaining({ sessionId: first.sessionId, status: "active", state: "open" }),
    ]);
    expect(model.hello().events.at(-1)).toMatchObject({ type: "OPEN", targetSessionId: first.sessionId });
  });
});
