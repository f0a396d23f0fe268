import { en } from "./en.js";
import { ko } from "./ko.js";
import {
  isMessageKey,
  type MessageCatalog,
  type MessageKey,
  type MessageParams,
  placeholdersFor,
  REQUIRED_PLACEHOLDERS,
} from "./messageKeys.js";
import { placeholdersOf, renderTemplate } from "./renderTemplate.js";

// No i18n library: a fixed set of keys with named placeholders, checked at config load, needs only a
// lookup and a replace, not loaders, plural rules and a runtime dependency.

/** The built-in languages: `ko` (Korean, the default) and `en` (English). */
export const LOCALES = ["ko", "en"] as const;
/** A built-in language, as `config.locale` names it. */
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

/** What is wrong with `template` for `key`: an unknown placeholder or a required one missing. */
export function templateProblem(key: MessageKey, template: string): string | undefined {
  const allowed = placeholdersFor(key);
  const used = placeholdersOf(template);
  const unknown = used.filter((name) => !allowed.includes(name));
  if (unknown.length > 0) {
    const list = allowed.length === 0 ? "none" : braced(allowed);
    return `unknown placeholder${unknown.length > 1 ? "s" : ""} ${braced(unknown)}; allowed: ${list}`;
  }
  const missing = (REQUIRED_PLACEHOLDERS[key] ?? []).filter((name) => !used.includes(name));
  if (missing.length > 0) {
    return `must keep ${braced(missing)}: agents end or pace the conversation by them`;
  }
  return undefined;
}

function braced(names: readonly string[]): string {
  return names.map((name) => `{${name}}`).join(", ");
}
