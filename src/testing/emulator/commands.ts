// Application commands per application (a bot's id) and scope (global, or one guild), as Discord keeps
// them; its caps per scope and daily quota of creates are not emulated.
import { DiscordError, invalidFormBody } from "./errors.js";
import type { Json } from "./state.js";

/** CHAT_INPUT (slash), USER and MESSAGE (context menu) commands. */
const TYPES = [1, 2, 3];
const CHAT_INPUT = 1;
/** Discord's rule for a CHAT_INPUT command's name (lower case where the letter has a lower case). */
const CHAT_INPUT_NAME = /^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;
/** The fields of a command a client sets and Discord keeps. */
const KEPT = [
  "name_localizations",
  "description_localizations",
  "options",
  "default_member_permissions",
  "dm_permission",
  "contexts",
  "integration_types",
  "nsfw",
];

interface StoredCommand {
  id: string;
  version: string;
  type: number;
  name: string;
  description: string;
  /** The other fields set (KEPT), nulls inside them dropped. */
  fields: Json;
}

/** A command as a client describes it, before the emulator gives it an id and a version. */
type CommandInput = Omit<StoredCommand, "id" | "version">;

/** `value` without null members, at any depth (Discord does not send back the nulls it was given). */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value as Json)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, withoutNulls(v)]),
  );
}

/** The command a create or overwrite body describes, checked as Discord checks it; `at` prefixes errors. */
function parse(input: unknown, at: string[]): CommandInput {
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    throw invalidFormBody(at, "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType");
  }
  const fail = (field: string, code: string, message: string) =>
    invalidFormBody([...at, field], code, message);
  const body = input as Json;
  const type = body.type ?? CHAT_INPUT;
  if (typeof type !== "number" || !TYPES.includes(type)) {
    throw fail("type", "BASE_TYPE_CHOICES", "Value must be one of {1, 2, 3}.");
  }
  const name = body.name;
  if (typeof name !== "string") throw fail("name", "BASE_TYPE_REQUIRED", "This field is required");
  if (name.length < 1 || name.length > 32) {
    throw fail("name", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 32 in length.");
  }
  if (type === CHAT_INPUT && (!CHAT_INPUT_NAME.test(name) || name !== name.toLowerCase())) {
    throw fail("name", "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid");
  }
  const description = typeof body.description === "string" ? body.description : "";
  if (type === CHAT_INPUT && (description.length < 1 || description.length > 100)) {
    throw fail("description", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.");
  }
  const fields: Json = {};
  for (const key of KEPT)
    if (body[key] !== undefined && body[key] !== null) fields[key] = withoutNulls(body[key]);
  const permissions = fields.default_member_permissions;
  if (permissions !== undefined) {
    if (!/^\d+$/.test(String(permissions))) {
      throw fail("default_member_permissions", "NUMBER_TYPE_COERCE", "Value is not int.");
    }
    fields.default_member_permissions = String(permissions);
  }
  return { type, name, description: type === CHAT_INPUT ? description : "", fields };
}

const sameCommand = (a: CommandInput, b: CommandInput) =>
  JSON.stringify([a.name, a.description, a.fields]) === JSON.stringify([b.name, b.description, b.fields]);

/** The commands of every application the emulator's bots own. */
export class ApplicationCommands {
  private readonly scopes = new Map<string, StoredCommand[]>();

  constructor(private readonly nextId: () => string) {}

  /** The commands of one scope: global (`guildId` undefined) or one guild's, as Discord lists them. */
  list(applicationId: string, guildId?: string): Json[] {
    return this.scope(applicationId, guildId).map((c) => commandJson(c, applicationId, guildId));
  }

  /** POST: a new command, or the one of the same type and name updated in place (`created: false`). */
  upsert(
    applicationId: string,
    guildId: string | undefined,
    input: Json,
  ): { command: Json; created: boolean } {
    const parsed = parse(input, []);
    const commands = this.scope(applicationId, guildId);
    const existing = commands.find((c) => c.type === parsed.type && c.name === parsed.name);
    const command = this.stored(parsed, existing);
    if (existing) Object.assign(existing, command);
    else commands.push(command);
    return { command: commandJson(command, applicationId, guildId), created: !existing };
  }

  /** PUT: the scope becomes `inputs`; one matching an old command by id, or type and name, keeps its id. */
  overwrite(applicationId: string, guildId: string | undefined, inputs: unknown[]): Json[] {
    const parsed = inputs.map((input, i) => parse(input, [String(i)]));
    const names = parsed.map((p) => `${p.type}:${p.name}`);
    const duplicate = names.findIndex((key, i) => names.indexOf(key) !== i);
    if (duplicate >= 0) {
      throw invalidFormBody(
        [String(duplicate), "name"],
        "APPLICATION_COMMANDS_DUPLICATE_NAME",
        "Application command names must be unique",
      );
    }
    const before = this.scope(applicationId, guildId);
    const after = parsed.map((p, i): StoredCommand => {
      const givenId = (inputs[i] as Json).id;
      const old =
        before.find((c) => c.id === givenId) ?? before.find((c) => c.type === p.type && c.name === p.name);
      return this.stored(p, old);
    });
    this.scopes.set(key(applicationId, guildId), after);
    return after.map((c) => commandJson(c, applicationId, guildId));
  }

  /** PATCH: the fields given replace the command's (its type stays). */
  edit(applicationId: string, guildId: string | undefined, commandId: string, patch: Json): Json {
    const command = this.find(applicationId, guildId, commandId);
    const current: Json = { ...command.fields, type: command.type, name: command.name };
    if (command.description !== "") current.description = command.description;
    const merged = { ...current, ...patch, type: command.type };
    Object.assign(command, this.stored(parse(merged, []), command));
    return commandJson(command, applicationId, guildId);
  }

  /** `p` stored: `old`'s id kept, with a new version only when something changed; no `old`: a new command. */
  private stored(p: CommandInput, old: StoredCommand | undefined): StoredCommand {
    if (!old) {
      const id = this.nextId();
      return { id, version: id, ...p };
    }
    return { ...p, id: old.id, version: sameCommand(old, p) ? old.version : this.nextId() };
  }

  remove(applicationId: string, guildId: string | undefined, commandId: string): void {
    const commands = this.scope(applicationId, guildId);
    commands.splice(commands.indexOf(this.find(applicationId, guildId, commandId)), 1);
  }

  private find(applicationId: string, guildId: string | undefined, commandId: string): StoredCommand {
    const command = this.scope(applicationId, guildId).find((c) => c.id === commandId);
    if (!command) throw new DiscordError(404, 10063, "Unknown application command");
    return command;
  }

  private scope(applicationId: string, guildId: string | undefined): StoredCommand[] {
    const k = key(applicationId, guildId);
    let commands = this.scopes.get(k);
    if (!commands) this.scopes.set(k, (commands = []));
    return commands;
  }
}

function key(applicationId: string, guildId: string | undefined): string {
  return `${applicationId}:${guildId ?? ""}`;
}

/** A command as Discord sends it: global ones with `dm_permission`, guild ones with `guild_id`. */
function commandJson(command: StoredCommand, applicationId: string, guildId: string | undefined): Json {
  const { options, contexts, integration_types, default_member_permissions, dm_permission, nsfw, ...rest } =
    command.fields;
  return {
    id: command.id,
    application_id: applicationId,
    version: command.version,
    default_member_permissions: default_member_permissions ?? null,
    type: command.type,
    name: command.name,
    ...rest,
    description: command.description,
    ...(guildId === undefined ? { dm_permission: dm_permission ?? true } : { guild_id: guildId }),
    contexts: contexts ?? null,
    integration_types: integration_types ?? [0],
    ...(Array.isArray(options) && options.length > 0 ? { options } : {}),
    nsfw: nsfw ?? false,
  };
}
