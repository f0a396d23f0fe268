export { en } from "./en.js";
export { ko } from "./ko.js";
export {
  LOCALES,
  type Locale,
  MESSAGE_CATALOGS,
  type MessageOverrides,
  messageCatalog,
  renderMessage,
  templateProblem,
} from "./messageCatalog.js";
export {
  isMessageKey,
  MESSAGE_KEYS,
  MESSAGES,
  type MessageCatalog,
  type MessageKey,
  type MessageParams,
  type PlainMessageKey,
  REQUIRED_PLACEHOLDERS,
  placeholdersFor,
} from "./messageKeys.js";
export { placeholdersOf, renderTemplate } from "./renderTemplate.js";
