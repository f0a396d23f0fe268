import { z } from "zod";
import { LOCALES, templateProblem } from "../messages/messageCatalog.js";
import { MESSAGE_KEYS, MESSAGES, type MessageKey } from "../messages/messageKeys.js";
import { reportPrefix } from "../collaboration/threadNames.js";

export const LocaleSchema = z
  .enum(LOCALES)
  .default("ko")
  .describe(
    "The language of every text posted to Discord or given to agents: `ko` (Korean) or `en` (English).",
  );

/** One template override: its placeholders must be the key's own. */
function templateSchema(key: MessageKey) {
  const { description, placeholders } = MESSAGES[key];
  const list = placeholders.length === 0 ? "none" : placeholders.map((p) => `\`{${p}}\``).join(", ");
  return z
    .string()
    .min(1)
    .superRefine((template, ctx) => {
      const problem = templateProblem(key, template);
      if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
      // Report threads are recognised by the name's text before its first placeholder.
      if (key === "reportThreadName" && reportPrefix({ reportThreadName: template }) === "") {
        ctx.addIssue({
          code: "custom",
          message:
            "must start with fixed text (before its first placeholder): report threads are recognised by it",
        });
      }
    })
    .optional()
    .describe(`${description} Placeholders: ${list}.`);
}

const shape = Object.fromEntries(MESSAGE_KEYS.map((key) => [key, templateSchema(key)])) as Record<
  MessageKey,
  ReturnType<typeof templateSchema>
>;

export const MessagesSchema = z
  .strictObject(shape)
  .prefault({})
  .describe(
    "Templates replacing single texts of the chosen `locale`, by key. A placeholder is written `{name}`; " +
      "each key accepts only its own placeholders. Every key with its texts: [Built-in texts](#built-in-texts).",
  );
