import type { ConfigProblem } from "./parseConfig.js";

/** A key of earlier configurations read under another path (`movedTo`) or ignored; `<id>` is any key. */
export interface LegacyConfigKey {
  path: string;
  /** The path it is read as instead; absent when it is ignored. */
  movedTo?: string;
  /** Why it is moved or ignored. */
  reason: string;
}

const AGENT_OVERRIDE: LegacyConfigKey = {
  path: "agents.<id>.agentToAgent",
  movedTo: "session.agentToAgent.agents.<id>",
  reason:
    "per-agent overrides of session.agentToAgent sit beside the settings they replace; agents.<id> " +
    "describes the agent's Discord bot. An agents.<id> left with nothing else adds no agent.",
};

/** Keys that load with a warning and change nothing. */
const IGNORED: readonly LegacyConfigKey[] = [
  {
    path: "discord.a2aRetry.checkIntervalMs",
    reason:
      "nothing polls: each mention's reminder and escalation is a durable timer that fires when it is " +
      "due (responseTimeoutMs after the latest delivery), also after a restart.",
  },
  {
    path: "session.agentToAgent.suggestedTurnsOverride",
    reason:
      "earlier configurations list it without defining it; a message's intent sets its follow-up turns " +
      "(notification and escalation 0, question and result report 1, the rest maxPingPongTurns), " +
      "capped by maxPingPongTurns and its per-agent override.",
  },
];

/** Every key of earlier configurations that loads with a warning: the moved one first, then the ignored ones. */
export const LEGACY_CONFIG_KEYS: readonly LegacyConfigKey[] = [AGENT_OVERRIDE, ...IGNORED];

type ConfigObject = Record<string, unknown>;

/** The config with earlier configurations' keys moved or removed, and what was done, for errors and warnings. */
export interface LegacyKeysApplied {
  config: ConfigObject;
  /** A moved value's new path and the path the user wrote, to name the user's path in errors. */
  moves: Array<{ from: string; to: string }>;
  problems: ConfigProblem[];
}

/** Moves or drops LEGACY_CONFIG_KEYS in a copy of the config, calling `warn` once per key found. */
export function applyLegacyKeys(input: ConfigObject, warn: (message: string) => void): LegacyKeysApplied {
  const config = copyObjects(input) as ConfigObject;
  for (const key of IGNORED) {
    const parts = key.path.split(".");
    const name = parts.pop() as string;
    const parent = objectAt(config, parts);
    if (parent === undefined || !Object.hasOwn(parent, name)) continue;
    Reflect.deleteProperty(parent, name);
    warn(`config key ${key.path} is ignored: ${key.reason}`);
  }
  const moves: LegacyKeysApplied["moves"] = [];
  const problems: ConfigProblem[] = [];
  const agents = objectAt(config, ["agents"]) ?? {};
  for (const [agentId, agent] of Object.entries(agents)) {
    if (!isPlainObject(agent) || !Object.hasOwn(agent, "agentToAgent")) continue;
    const from = `agents.${agentId}.agentToAgent`;
    const to = `session.agentToAgent.agents.${agentId}`;
    // A container that is not an object is reported by the schema; the key stays where it is.
    const overrides = ["session", "agentToAgent", "agents"].reduce<ConfigObject | undefined>(
      (object, key) => object && objectIn(object, key),
      config,
    );
    if (overrides === undefined) continue;
    const { agentToAgent, ...rest } = agent;
    const keepsAgent = Object.keys(rest).length > 0;
    if (keepsAgent) define(agents, agentId, rest);
    else Reflect.deleteProperty(agents, agentId);
    if (Object.hasOwn(overrides, agentId)) {
      problems.push({ path: from, message: `says what ${to} says too: keep one of them` });
      continue;
    }
    define(overrides, agentId, agentToAgent);
    moves.push({ from, to });
    const dropped = keepsAgent ? "" : ` (agents.${agentId} had nothing else, so it adds no agent)`;
    warn(`config key ${from} is read as ${to}${dropped}`);
  }
  return { config, moves, problems };
}

/** A copy of every plain object in `value` (other values are shared). */
function copyObjects(value: unknown): unknown {
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, copyObjects(inner)]));
}

function objectAt(config: ConfigObject, path: string[]): ConfigObject | undefined {
  let node: unknown = config;
  for (const key of path) {
    if (!isPlainObject(node) || !Object.hasOwn(node, key)) return undefined;
    node = node[key];
  }
  return isPlainObject(node) ? node : undefined;
}

/** The object at `object[key]`, created when missing; undefined when something else is there. */
function objectIn(object: ConfigObject, key: string): ConfigObject | undefined {
  if (!Object.hasOwn(object, key) || object[key] === undefined) define(object, key, {});
  const value = object[key];
  return isPlainObject(value) ? value : undefined;
}

/** Sets an own property, even one named `__proto__`. */
function define(object: ConfigObject, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

/** An object written as a literal or parsed from JSON: what a config and each of its sections must be. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
