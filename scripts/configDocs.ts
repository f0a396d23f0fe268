import { z } from "zod";
import { A2AConfigSchema, DISCORD_ID_PATTERN, LEGACY_CONFIG_KEYS } from "../src/policies/index.js";
import { LOCALES, MESSAGE_CATALOGS } from "../src/policies/messages/messageCatalog.js";
import { MESSAGE_KEYS, placeholdersFor } from "../src/policies/messages/messageKeys.js";

/** The part of JSON Schema that z.toJSONSchema produces for A2AConfigSchema and this page reads. */
interface JsonSchemaNode {
  type?: string;
  description?: string;
  default?: unknown;
  properties?: Record<string, JsonSchemaNode>;
  additionalProperties?: boolean | JsonSchemaNode;
  required?: string[];
  items?: JsonSchemaNode;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

/** One leaf setting, as docs/config.md shows it. */
export interface ConfigSetting {
  /** Full dotted path; a record's key is written `<id>`: `agents.<id>.discordBotId`. */
  path: string;
  type: string;
  /** Present when the schema fills a default in. */
  default?: unknown;
  /** The enclosing object must have it (an agent's `discordBotId`). */
  required: boolean;
  /** Numeric bounds, as the schema accepts them (whole numbers for integers). */
  min?: number;
  max?: number;
  allowed: string;
  description: string;
}

/** An object of the config holding leaf settings: one heading and one table of docs/config.md. */
export interface ConfigSection {
  path: string;
  description: string;
  settings: ConfigSetting[];
}

/** A record's key in paths. */
export const RECORD_KEY = "<id>";

/** The example at the top of docs/config.md (its test checks that parseConfig accepts it). */
export const MINIMAL_CONFIG_EXAMPLE = {
  agents: {
    ruda: { discordBotId: "1400000000000000101", name: "Ruda" },
    eden: { discordBotId: "1400000000000000102", name: "Eden" },
  },
  discord: {
    collaboration: { defaultChannel: "1400000000000000500", allowedChannels: ["1400000000000000500"] },
    a2aRetry: { escalationMentionId: "1400000000000000900" },
  },
};

/**
 * The config's sections in schema order, each with its leaf settings: read from
 * `z.toJSONSchema(A2AConfigSchema)` (as the user writes the config, so defaults are not required),
 * so types, defaults, bounds and descriptions are the schema's own.
 */
export function configSections(): ConfigSection[] {
  const root = z.toJSONSchema(A2AConfigSchema, { io: "input" }) as unknown as JsonSchemaNode;
  const sections: ConfigSection[] = [];
  const visit = (node: JsonSchemaNode, path: string[], description: string | undefined) => {
    const section: ConfigSection = { path: path.join("."), description: description ?? "", settings: [] };
    sections.push(section);
    for (const [key, child] of Object.entries(node.properties ?? {})) {
      const childPath = [...path, key];
      const record = recordValue(child);
      if (isObject(child)) visit(child, childPath, child.description);
      else if (record !== undefined) visit(record, [...childPath, RECORD_KEY], child.description);
      else section.settings.push(toSetting(childPath, child, node.required?.includes(key) ?? false));
    }
  };
  visit(root, [], root.description);
  return sections.filter((section) => section.settings.length > 0);
}

/** Every leaf setting, in schema order. */
export function configSettings(): ConfigSetting[] {
  return configSections().flatMap((section) => section.settings);
}

/** docs/config.md: every setting of A2AConfigSchema with its type, default, allowed values and meaning. */
export function renderConfigDocs(): string {
  const lines = [
    "# Configuration",
    "",
    "<!-- Generated from A2AConfigSchema (src/policies/config/A2AConfigSchema.ts) by `npx tsx scripts/config-docs.ts`;",
    "     do not edit: change the schema's descriptions and run the script. A test fails when this page is stale. -->",
    "",
    "`createA2ARuntime({ config })` and `parseConfig(config)` take one JSON object. Every setting is optional",
    "except an agent's `discordBotId`; a missing one takes its default. Objects are strict: an unknown key or a",
    "bad value is an error that names its full path and what is allowed, and so are settings that cannot work",
    "together (a `defaultChannel` outside `allowedChannels`, two agents with one `discordBotId`). Keys of",
    "earlier configurations load with a warning ([below](#keys-of-earlier-configurations)). Durations are",
    "whole milliseconds; Discord ids are strings of digits (snowflakes).",
    "`npx a2a-statecharts config a2a.json` checks a file and prints it with every default filled in.",
    "",
    "A minimal config: two agents with their Discord bots, the channel their collaboration threads open in,",
    "and the human a silent agent is escalated to.",
    "",
    "```json",
    JSON.stringify(MINIMAL_CONFIG_EXAMPLE, null, 2),
    "```",
    "",
    `\`${RECORD_KEY}\` in a path stands for a key of your choosing (an agent id).`,
  ];
  for (const section of configSections()) {
    lines.push("", section.path === "" ? "## Top level" : `## \`${section.path}\``, "");
    if (section.description !== "") lines.push(section.description, "");
    lines.push("| Setting | Type | Default | Allowed | Description |", "| --- | --- | --- | --- | --- |");
    for (const s of section.settings) {
      const cells = [`\`${s.path}\``, s.type, defaultText(s), s.allowed, s.description];
      lines.push(`| ${cells.map(cell).join(" | ")} |`);
    }
  }
  lines.push(...builtInTextsSection(), ...legacyKeysSection());
  return `${lines.join("\n")}\n`;
}

/** Every message key with its placeholders and its text in each built-in locale. */
function builtInTextsSection(): string[] {
  const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;
  return [
    "",
    "## Built-in texts",
    "",
    "The texts each `locale` writes, by key of `messages`, with the placeholders a template may use. A",
    "line of a template made only of placeholders that come out empty is left out (`{location}`,",
    "`{previous}`); ↵ marks a line break.",
    ...MESSAGE_KEYS.flatMap((key) => {
      const placeholders =
        placeholdersFor(key)
          .map((p) => `\`{${p}}\``)
          .join(", ") || "none";
      return [
        "",
        `- \`${key}\` (placeholders: ${placeholders})`,
        ...LOCALES.map((l) => `  - ${l}: ${code(MESSAGE_CATALOGS[l][key].replace(/\n/g, " ↵ "))}`),
      ];
    }),
  ];
}

/** Keys of earlier configurations that load with a warning, and why. */
function legacyKeysSection(): string[] {
  return [
    "",
    "## Keys of earlier configurations",
    "",
    "Configurations written for earlier a2a gateways load as written. These keys of theirs are read",
    "elsewhere or ignored, each with a warning saying so: passed to",
    "`parseConfig(config, { onWarning })`, logged by `createA2ARuntime` (its `logger`), printed by",
    "`a2a-statecharts config`. Any other unknown key is an error.",
    "",
    ...LEGACY_CONFIG_KEYS.map(
      (key) =>
        `- \`${key.path}\`: ${key.movedTo === undefined ? "ignored" : `read as \`${key.movedTo}\``}; ` +
        key.reason,
    ),
  ];
}

function toSetting(path: string[], node: JsonSchemaNode, required: boolean): ConfigSetting {
  const key = path.at(-1) ?? "";
  const bounds = numericBounds(node);
  return {
    path: path.join("."),
    type: typeText(node, key),
    ...("default" in node ? { default: node.default } : {}),
    required,
    ...bounds,
    allowed: allowedText(node, bounds),
    description: node.description ?? "",
  };
}

/** Durations are named `…Ms` or `…TTL` throughout the schema (its header: every duration is milliseconds). */
function isDuration(key: string): boolean {
  return /(?:Ms|TTL)$/.test(key);
}

function typeText(node: JsonSchemaNode, key: string): string {
  if (node.type === "integer" && isDuration(key)) return "integer (ms)";
  if (node.type === "array") return `array of ${node.items?.type ?? "values"}s`;
  return node.type ?? "any";
}

function numericBounds(node: JsonSchemaNode): { min?: number; max?: number } {
  if (node.type !== "integer" && node.type !== "number") return {};
  const step = node.type === "integer" ? 1 : 0;
  const min =
    node.minimum ?? (node.exclusiveMinimum === undefined ? undefined : node.exclusiveMinimum + step);
  const rawMax =
    node.maximum ?? (node.exclusiveMaximum === undefined ? undefined : node.exclusiveMaximum - step);
  // zod states the safe-integer limit of z.int() as a maximum: that is no setting's real bound.
  const max = rawMax === undefined || rawMax >= Number.MAX_SAFE_INTEGER ? undefined : rawMax;
  return { ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }) };
}

function allowedText(node: JsonSchemaNode, bounds: { min?: number; max?: number }): string {
  if (node.enum !== undefined) return node.enum.map((v) => `\`${JSON.stringify(v)}\``).join(", ");
  switch (node.type) {
    case "integer":
    case "number": {
      const { min, max } = bounds;
      if (min !== undefined && max !== undefined) return `${min} to ${max}`;
      if (min !== undefined) return `≥ ${min}`;
      if (max !== undefined) return `≤ ${max}`;
      return "any";
    }
    case "boolean":
      return "`true`, `false`";
    case "string":
      return stringText(node);
    case "array":
      return `a list; each ${node.items === undefined ? "any value" : stringText(node.items)}`;
    default:
      return "any";
  }
}

function stringText(node: JsonSchemaNode): string {
  if (node.type !== "string") return node.type ?? "any value";
  if (node.pattern === DISCORD_ID_PATTERN.source) return "a Discord id: 1 to 20 digits";
  if ((node.minLength ?? 0) > 0) return "a non-empty string";
  return "a string";
}

function defaultText(s: ConfigSetting): string {
  if (!("default" in s)) return s.required ? "**required**" : "unset";
  const json = `\`${JSON.stringify(s.default)}\``;
  return typeof s.default === "number" && isDuration(s.path) ? `${json} (${humanMs(s.default)})` : json;
}

function humanMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1_000 === 0) return `${ms / 1_000} s`;
  return `${ms} ms`;
}

function isObject(node: JsonSchemaNode): boolean {
  return node.type === "object" && node.properties !== undefined;
}

/** The value schema of a record (an object with keys of your choosing), if the node is one. */
function recordValue(node: JsonSchemaNode): JsonSchemaNode | undefined {
  if (node.type !== "object" || node.properties !== undefined) return undefined;
  const value = node.additionalProperties;
  return typeof value === "object" && isObject(value) ? value : undefined;
}

/** A Markdown table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").replace(/\|/g, "\\|");
}
