// How the host has the store check stored snapshots: each state value of a machine is resolved once,
// however many records are in it, and a value the machine lacks is refused every time.
import { describe, expect, it, vi } from "vitest";
import { createMachine } from "xstate";
import { recordRules } from "../../src/durable/hostedActors.js";

const light = createMachine({
  id: "light",
  initial: "green",
  states: { green: {}, yellow: {}, red: { initial: "walk", states: { walk: {}, wait: {} } } },
});

describe("recordRules().validateSnapshot", () => {
  it("resolves each state value once: 3,000 records in 3 states cost 3 resolutions", () => {
    const rules = recordRules({ light: { machine: light, version: 1 } }, { light });
    const resolveState = vi.spyOn(light, "resolveState");
    const values = ["green", "yellow", { red: "walk" }];
    for (let i = 0; i < 3_000; i++) {
      const snapshot = { status: "active", value: values[i % 3], context: { i } };
      expect(rules.validateSnapshot?.("light", snapshot)).toBeUndefined();
    }
    expect(resolveState).toHaveBeenCalledTimes(3);
  });

  it("refuses a value the machine lacks, each time it is asked", () => {
    const rules = recordRules({ light: { machine: light, version: 1 } }, { light });
    for (let i = 0; i < 2; i++) {
      expect(rules.validateSnapshot?.("light", { status: "active", value: "blue", context: {} })).toMatch(
        /its state value "blue" is not one of machine "light"/,
      );
    }
    expect(rules.validateSnapshot?.("light", { status: "active", value: 3, context: {} })).toMatch(
      /is not a state name/,
    );
  });
});
