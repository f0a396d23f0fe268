import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  configSections,
  configSettings,
  MINIMAL_CONFIG_EXAMPLE,
  RECORD_KEY,
  renderConfigDocs,
} from "../../scripts/configDocs.js";
import { A2AConfigSchema, parseConfig } from "../../src/index.js";
import { LEGACY_CONFIG_KEYS } from "../../src/policies/index.js";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * The leaves of the zod schema, found by walking it directly (not through the JSON Schema the page
 * is rendered from): objects are followed, a record's values under `<id>`, wrappers unwrapped.
 */
function schemaLeaves(): Array<{ path: string; schema: z.ZodType }> {
  const leaves: Array<{ path: string; schema: z.ZodType }> = [];
  const visit = (node: z.ZodType, path: string[]) => {
    let inner: z.ZodType = node;
    while (
      inner instanceof z.ZodDefault ||
      inner instanceof z.ZodPrefault ||
      inner instanceof z.ZodOptional
    ) {
      inner = inner.unwrap() as z.ZodType;
    }
    if (inner instanceof z.ZodObject) {
      for (const [key, child] of Object.entries(inner.shape as Record<string, z.ZodType>))
        visit(child, [...path, key]);
    } else if (inner instanceof z.ZodRecord) {
      visit(inner.valueType as z.ZodType, [...path, RECORD_KEY]);
    } else {
      leaves.push({ path: path.join("."), schema: node });
    }
  };
  visit(A2AConfigSchema, []);
  return leaves;
}

/** A config setting `path` to `value`; a record's key is "ruda", and an agent gets the bot id it requires. */
function configWith(path: string, value: unknown): Record<string, unknown> {
  const keys = path.split(".").map((key) => (key === RECORD_KEY ? "ruda" : key));
  const config: Record<string, unknown> = {};
  let at = config;
  keys.forEach((key, i) => {
    if (i === keys.length - 1) {
      at[key] = value;
      return;
    }
    const next: Record<string, unknown> = (at[key] as Record<string, unknown> | undefined) ?? {};
    at[key] = next;
    at = next;
  });
  if (keys[0] === "agents" && keys[2] !== "discordBotId") {
    (at as Record<string, unknown>).discordBotId ??= "1400000000000000101";
  }
  return config;
}

function valueAt(config: unknown, path: string): unknown {
  return path
    .split(".")
    .reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], config);
}

describe("docs/config.md", () => {
  it("is what `npx tsx scripts/config-docs.ts` generates now", () => {
    const committed = readFileSync(join(repoRoot, "docs/config.md"), "utf8");
    expect(committed, "docs/config.md is stale: run `npx tsx scripts/config-docs.ts`").toBe(
      renderConfigDocs(),
    );
  });

  it("has a row with a description for every leaf of the schema, and no other rows", () => {
    const docs = renderConfigDocs();
    const leaves = schemaLeaves();
    expect(leaves.length).toBeGreaterThanOrEqual(35);
    for (const { path, schema } of leaves) {
      expect(docs, `${path} is not documented`).toContain(`| \`${path}\` |`);
      expect(schema.description?.trim(), `${path} has no .describe() in A2AConfigSchema`).toBeTruthy();
    }
    expect(configSettings().map((s) => s.path)).toEqual(leaves.map((l) => l.path));
    const rows = docs.split("\n").filter((line) => line.startsWith("| `"));
    expect(rows).toHaveLength(leaves.length);
    for (const section of configSections()) {
      expect(docs).toContain(section.path === "" ? "## Top level" : `## \`${section.path}\``);
      expect(section.description, `section ${section.path} has no description`).not.toBe("");
    }
  });

  it("states the defaults parseConfig fills in", () => {
    const defaults = parseConfig();
    const withDefault = configSettings().filter((s) => "default" in s);
    expect(withDefault.length).toBeGreaterThan(25);
    for (const s of withDefault) {
      expect(s.path.includes(RECORD_KEY), s.path).toBe(false);
      expect(valueAt(defaults, s.path), s.path).toEqual(s.default);
    }
    // Settings without a default are left out by parseConfig.
    for (const s of configSettings().filter((x) => !("default" in x) && !x.path.includes(RECORD_KEY))) {
      expect(valueAt(defaults, s.path), s.path).toBeUndefined();
    }
    expect(renderConfigDocs()).toContain(
      "| `session.agentToAgent.maxPingPongTurns` | integer | `5` | 0 to 10 |",
    );
  });

  it("states the bounds parseConfig enforces", () => {
    const numeric = configSettings().filter((s) => s.type.startsWith("integer"));
    expect(numeric.length).toBeGreaterThan(20);
    const accepts = (path: string, value: unknown) => {
      try {
        parseConfig(configWith(path, value));
        return true;
      } catch {
        return false;
      }
    };
    for (const s of numeric) {
      expect(s.min, `${s.path} has no documented minimum`).toBeDefined();
      const min = s.min ?? 0;
      expect(accepts(s.path, min), `${s.path} = ${min}`).toBe(true);
      expect(accepts(s.path, min - 1), `${s.path} = ${min - 1}`).toBe(false);
      expect(accepts(s.path, min + 0.5), `${s.path} = ${min + 0.5} (whole numbers only)`).toBe(false);
      if (s.max !== undefined) {
        expect(accepts(s.path, s.max), `${s.path} = ${s.max}`).toBe(true);
        expect(accepts(s.path, s.max + 1), `${s.path} = ${s.max + 1}`).toBe(false);
      } else {
        expect(accepts(s.path, 10 ** 12), `${s.path} = 10^12`).toBe(true);
      }
    }
    // A required setting is required, and an agent without it is refused.
    const required = configSettings().filter((s) => s.required);
    expect(required.map((s) => s.path)).toEqual([`agents.${RECORD_KEY}.discordBotId`]);
    expect(() => parseConfig({ agents: { ruda: { name: "Ruda" } } })).toThrow(/agents\.ruda\.discordBotId/);
  });

  it("lists each key of earlier configurations that loads with a warning, with its reason", () => {
    const docs = renderConfigDocs();
    expect(docs).toContain("## Keys of earlier configurations");
    for (const key of LEGACY_CONFIG_KEYS) {
      expect(docs).toContain(`- \`${key.path}\`: `);
      expect(docs).toContain(key.reason);
    }
  });

  it("states that Discord ids are digits", () => {
    expect(renderConfigDocs()).toContain(
      "| `agents.<id>.discordBotId` | string | **required** | a Discord id: 1 to 20 digits |",
    );
  });

  it("opens with a minimal example that parseConfig accepts", () => {
    expect(() => parseConfig(MINIMAL_CONFIG_EXAMPLE)).not.toThrow();
    const docs = renderConfigDocs();
    const example = /```json\n([\s\S]*?)\n```/.exec(docs)?.[1];
    expect(JSON.parse(example ?? "null")).toEqual(MINIMAL_CONFIG_EXAMPLE);
  });
});
