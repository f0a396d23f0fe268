import { describe, expect, it } from "vitest";
import { A2AConfigError, parseConfig } from "../../../src/policies/config/parseConfig.js";
import { messageCatalog } from "../../../src/policies/messages/messageCatalog.js";
import { en } from "../../../src/policies/messages/en.js";

function problems(input: unknown) {
  try {
    parseConfig(input);
  } catch (error) {
    if (error instanceof A2AConfigError) return { message: error.message, problems: error.problems };
    throw error;
  }
  throw new Error("parseConfig accepted it");
}

describe("config.locale and config.messages", () => {
  it("default to Korean without overrides", () => {
    const config = parseConfig();
    expect(config.locale).toBe("ko");
    expect(config.messages).toEqual({});
  });

  it("load a locale and overrides, which the catalog applies", () => {
    const config = parseConfig({
      locale: "en",
      messages: { reminder: "{target}: {attempts}/{maxAttempts}" },
    });
    const catalog = messageCatalog(config);
    expect(catalog.reminder).toBe("{target}: {attempts}/{maxAttempts}");
    expect(catalog.escalation).toBe(en.escalation);
  });

  it("refuse an unknown locale, listing the known ones", () => {
    expect(problems({ locale: "fr" }).problems).toEqual([
      { path: "locale", message: 'must be one of "ko", "en", got "fr"' },
    ]);
  });

  it("refuse an unknown message key at its path", () => {
    const { message, problems: found } = problems({ messages: { bogusKey: "x" } });
    expect(found.map((p) => p.path)).toEqual(["messages.bogusKey"]);
    expect(found[0]?.message).toMatch(/^unknown key \(allowed here: reminder, escalation, /);
    expect(message).toContain("messages.bogusKey: unknown key");
  });

  it("refuse a template with an unknown placeholder, naming it and the allowed ones", () => {
    const { message, problems: found } = problems({
      locale: "en",
      messages: { reminder: "{target} {foo}", discordSendSent: "ok" },
    });
    expect(found).toEqual([
      {
        path: "messages.reminder",
        message:
          "unknown placeholder {foo}; allowed: {attempts}, {maxAttempts}, {target}, {original}, {minutes}",
      },
    ]);
    expect(message).toContain("messages.reminder: unknown placeholder {foo}");
  });

  it("refuse an agent prompt without its skip token", () => {
    expect(problems({ messages: { replyContext: "Turn {turn} of {maxTurns}" } }).problems).toEqual([
      {
        path: "messages.replyContext",
        message: "must keep {skipToken}: agents end or pace the conversation by them",
      },
    ]);
  });

  it("refuse an empty template and a non-string one", () => {
    expect(problems({ messages: { reminder: "", escalation: 3 } }).problems.map((p) => p.path)).toEqual([
      "messages.reminder",
      "messages.escalation",
    ]);
  });

  it("refuse a report thread name without fixed text before its first placeholder (it could not be recognised)", () => {
    expect(problems({ messages: { reportThreadName: "{eventType} at {time}" } }).problems).toEqual([
      {
        path: "messages.reportThreadName",
        message:
          "must start with fixed text (before its first placeholder): report threads are recognised by it",
      },
    ]);
    expect(() => parseConfig({ messages: { reportThreadName: "📋 {eventType} {time}" } })).not.toThrow();
  });
});
