import { en } from "./en.js";
import { ko } from "./ko.js";
import {
  isMessageKey,
  type MessageCatalog,
  type MessageKey,
  type MessageParams,
  placeholdersFor,
} from "./messageKeys.js";
import { placeholdersOf, renderTemplate } from "./renderTemplate.js";

// No i18n library: the texts are a fixed set of keys with named placeholders, checked when the config
// loads. i18next or ICU MessageFormat would add loaders, plural rules and a runtime dependency for
// what a lookup and a replace do here.

export const LOCALES = ["ko", "en"] as const;
export type Locale = (typeof LOCALES)[number];

/** The built-in catalogs. */
export const MESSAGE_CATALOGS: Readonly<Record<Locale, MessageCatalog>> = { ko, en };

/** Templates that replace single messages of a locale, by key. */
export type MessageOverrides = Partial<Record<MessageKey, string>>;

/** The catalog of `locale` (default Korean) with `messages` replacing single templates. */
export function messageCatalog(o: { locale?: Locale; messages?: MessageOverrides } = {}): MessageCatalog {
  const base = MESSAGE_CATALOGS[o.locale ?? "ko"];
  const overrides = Object.entries(o.messages ?? {}).filter(
    (entry): entry is [MessageKey, string] => isMessageKey(entry[0]) && typeof entry[1] === "string",
  );
  return overrides.length === 0 ? base : { ...base, ...Object.fromEntries(overrides) };
}

/** One message of `catalog`, its placeholders filled. */
export function renderMessage<K extends MessageKey>(
  catalog: MessageCatalog,
  key: K,
  params: MessageParams<K>,
): string {
  return renderTemplate(catalog[key], params);
}

/** What is wrong with `template` as the text of `key` (a placeholder it does not have), or undefined. */
export function templateProblem(key: MessageKey, template: string): string | undefined {
  const allowed = placeholdersFor(key);
  const unknown = placeholdersOf(template).filter((name) => !allowed.includes(name));
  if (unknown.length === 0) return undefined;
  const list = allowed.length === 0 ? "none" : allowed.map((name) => `{${name}}`).join(", ");
  const names = unknown.map((name) => `{${name}}`).join(", ");
  return `unknown placeholder${unknown.length > 1 ? "s" : ""} ${names}; allowed: ${list}`;
}
