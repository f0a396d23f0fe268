import { describe, expect, it } from "vitest";
import { en } from "../../../src/policies/messages/en.js";
import { ko } from "../../../src/policies/messages/ko.js";
import {
  LOCALES,
  MESSAGE_CATALOGS,
  messageCatalog,
  renderMessage,
  templateProblem,
} from "../../../src/policies/messages/messageCatalog.js";
import { MESSAGE_KEYS, MESSAGES } from "../../../src/policies/messages/messageKeys.js";
import { placeholdersOf, renderTemplate } from "../../../src/policies/messages/renderTemplate.js";

const sorted = (list: readonly string[]) => [...list].sort();

describe("the built-in catalogs", () => {
  it.each(LOCALES)("%s has a template for every key and no other", (locale) => {
    expect(sorted(Object.keys(MESSAGE_CATALOGS[locale]))).toEqual(sorted(MESSAGE_KEYS));
  });

  it.each(MESSAGE_KEYS)("%s uses the same placeholders in ko and en, each one its key declares", (key) => {
    expect(typeof ko[key]).toBe("string");
    expect(typeof en[key]).toBe("string");
    expect(sorted(placeholdersOf(en[key]))).toEqual(sorted(placeholdersOf(ko[key])));
    expect(templateProblem(key, ko[key])).toBeUndefined();
    expect(templateProblem(key, en[key])).toBeUndefined();
  });

  it.each(LOCALES)("%s keeps `Turn N of M` and the exact skip tokens in the agent prompts", (locale) => {
    const catalog = MESSAGE_CATALOGS[locale];
    expect(catalog.replyContext).toContain("Turn {turn} of {maxTurns}");
    expect(catalog.replyContext).toContain("{skipToken}");
    expect(catalog.announceContext).toContain("{skipToken}");
  });

  it("describes every key", () => {
    for (const key of MESSAGE_KEYS) expect(MESSAGES[key].description.length, key).toBeGreaterThan(10);
  });
});

describe("renderTemplate", () => {
  it("fills each placeholder, as often as it appears", () => {
    expect(renderTemplate("{a} and {b}, {a}", { a: "x", b: 2 })).toBe("x and 2, x");
  });

  it("leaves a placeholder without a value and any other brace as written", () => {
    expect(renderTemplate("{a} {missing} {not a placeholder} {}", { a: "x" })).toBe(
      "x {missing} {not a placeholder} {}",
    );
  });

  it("does not expand placeholders inside a value", () => {
    expect(renderTemplate("{a}", { a: "{b}", b: "no" })).toBe("{b}");
  });

  it("drops a line made only of placeholders that come out empty, and keeps other blank lines", () => {
    expect(renderTemplate("head\n{opt}\n\ntail {opt}", { opt: "" })).toBe("head\n\ntail ");
    expect(renderTemplate("head\n{opt}\ntail", { opt: "mid" })).toBe("head\nmid\ntail");
  });
});

describe("messageCatalog", () => {
  it("is Korean by default and English for `en`", () => {
    expect(messageCatalog()).toBe(ko);
    expect(messageCatalog({ locale: "en" })).toBe(en);
  });

  it("replaces only the overridden templates of the chosen locale", () => {
    const catalog = messageCatalog({ locale: "en", messages: { discordSendSent: "Sent to {threadId}" } });
    expect(renderMessage(catalog, "discordSendSent", { threadId: "42" })).toBe("Sent to 42");
    expect(catalog.reminder).toBe(en.reminder);
  });
});

describe("templateProblem", () => {
  it("names each unknown placeholder and lists the allowed ones", () => {
    expect(templateProblem("reminder", "{foo} {attempts} {bar}")).toBe(
      "unknown placeholders {foo}, {bar}; allowed: {attempts}, {maxAttempts}, {target}, {original}, {minutes}",
    );
    expect(templateProblem("errorWaitTimeout", "late {by}")).toBe("unknown placeholder {by}; allowed: none");
  });

  it("names the placeholders an agent prompt must keep", () => {
    expect(templateProblem("replyContext", "Turn {turn} of {maxTurns}, be brief")).toBe(
      "must keep {skipToken}: agents end or pace the conversation by them",
    );
    expect(templateProblem("announceContext", "{latestReply}")).toBe(
      "must keep {skipToken}: agents end or pace the conversation by them",
    );
    expect(templateProblem("announceContext", "Say it, or {skipToken}")).toBeUndefined();
  });
});
