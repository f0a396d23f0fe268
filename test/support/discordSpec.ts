// Discord's official OpenAPI 3.1 spec (test/fixtures/discord-openapi.json, discord/discord-api-spec) as a
// validator of the emulator's REST exchanges: which operation a request is, and whether its request and
// response bodies match the schemas the spec gives that operation.
import { readFileSync } from "node:fs";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { RestExchange } from "../../src/testing/index.js";

const SPEC_FILE = new URL("../fixtures/discord-openapi.json", import.meta.url);
/** The id the whole spec is registered under; every schema is compiled as a `$ref` into it. */
const SPEC_ID = "discord-openapi.json";

type JsonObject = Record<string, unknown>;

/** One operation of the spec: a method on a path template. */
export interface SpecOperation {
  operationId: string;
  method: string;
  /** The spec's path template, e.g. `/channels/{channel_id}/messages`. */
  template: string;
}

interface CompiledOperation extends SpecOperation {
  pattern: RegExp;
  /** Literal paths (`/users/@me`) win over templates that also match them (`/users/{user_id}`). */
  literal: boolean;
  pointer: string;
  raw: JsonObject;
}

const isObject = (value: unknown): value is JsonObject =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** `/channels/{channel_id}` → JSON-pointer token `~1channels~1%7Bchannel_id%7D` (a URI fragment). */
function pointerToken(token: string): string {
  return encodeURIComponent(token.replace(/~/g, "~0").replace(/\//g, "~1"));
}

export class DiscordSpec {
  private readonly ajv: Ajv2020;
  private readonly spec: JsonObject;
  private readonly operations: CompiledOperation[] = [];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(spec: JsonObject) {
    this.spec = spec;
    // ajv stays strict (its default): the one non-standard keyword of the spec is declared below.
    this.ajv = new Ajv2020({ allErrors: true });
    // ajv-formats is CommonJS: its default export is the function itself under NodeNext.
    (addFormatsModule as unknown as (ajv: Ajv2020) => void)(this.ajv);
    // Discord's own formats: ids are decimal strings (the `pattern` beside the format checks it too), a
    // nonce is any string of at most 25 characters (the `maxLength` beside it checks that).
    this.ajv.addFormat("snowflake", /^(0|[1-9][0-9]*)$/);
    this.ajv.addFormat("nonce", { type: "string", validate: () => true });
    // `x-discord-union: "oneOf"` marks an `anyOf` Discord means as a oneOf; an annotation for ajv.
    this.ajv.addKeyword({ keyword: "x-discord-union", schemaType: "string" });
    // The document's top level is OpenAPI, not a schema: its members are declared (as annotations) so
    // the document can be registered whole and every `#/…` pointer into it resolves.
    for (const keyword of Object.keys(spec)) this.ajv.addKeyword(keyword);
    this.ajv.addSchema({ ...spec, $id: SPEC_ID });
    const paths = spec.paths as Record<string, JsonObject>;
    for (const [template, item] of Object.entries(paths)) {
      for (const [method, raw] of Object.entries(item)) {
        if (method === "parameters" || !isObject(raw)) continue;
        const source = template
          .split(/(\{[^}]+\})/)
          .map((part) => (part.startsWith("{") ? "([^/]+)" : part.replace(/[.*+?^$()|[\]\\]/g, "\\$&")))
          .join("");
        this.operations.push({
          operationId: String(raw.operationId),
          method: method.toUpperCase(),
          template,
          pattern: new RegExp(`^${source}$`),
          literal: !template.includes("{"),
          pointer: `#/paths/${pointerToken(template)}/${method}`,
          raw,
        });
      }
    }
  }

  /** The operation a request is, or undefined when the spec has no such route. */
  operation(method: string, path: string): SpecOperation | undefined {
    return this.find(method, path);
  }

  private find(method: string, path: string): CompiledOperation | undefined {
    const matching = this.operations.filter((o) => o.method === method.toUpperCase() && o.pattern.test(path));
    return matching.find((o) => o.literal) ?? matching[0];
  }

  /**
   * Every problem of one exchange's request: its path and query parameters must match the operation's
   * parameter schemas (no undocumented query parameter), its body the operation's JSON request schema.
   */
  requestProblems(exchange: RestExchange): string[] {
    const op = this.find(exchange.method, exchange.path);
    return op ? [...this.checkParameters(op, exchange), ...this.checkRequest(op, exchange)] : [];
  }

  /** Every problem of one exchange's answer: its body must match the schema the operation gives its status. */
  responseProblems(exchange: RestExchange): string[] {
    const op = this.find(exchange.method, exchange.path);
    const name = op ? op.operationId : `${exchange.method} ${exchange.path} (no such operation)`;
    return this.checkResponse(op, name, exchange);
  }

  /** Problems of `body` as the response `status` of the operation `operationId` (for the guard tests). */
  checkResponseBody(operationId: string, status: number, body: unknown): string[] {
    const op = this.operations.find((o) => o.operationId === operationId);
    if (!op) throw new Error(`the spec has no operation ${operationId}`);
    return this.checkResponse(op, operationId, {
      method: op.method,
      path: op.template,
      query: {},
      status,
      responseBody: body,
    });
  }

  /**
   * Every property path the schema of a response requires in `body`, as JSON pointers (`/author/id`):
   * walks the body along the schema (objects, arrays, `$ref`, `allOf`, and the `oneOf`/`anyOf` branch
   * the value matches) so a guard can delete each one and expect the validator to object.
   */
  requiredPointers(operationId: string, status: number, body: unknown): string[] {
    const op = this.operations.find((o) => o.operationId === operationId);
    const schema = op ? this.responseSchema(op, status) : undefined;
    if (!schema) throw new Error(`the spec has no ${status} response schema for ${operationId}`);
    const found: string[] = [];
    this.walkRequired(schema.pointer, body, "", found);
    return [...new Set(found)];
  }

  private walkRequired(pointer: string, value: unknown, at: string, found: string[]): void {
    const schema = this.resolve(pointer);
    if (!isObject(schema)) return;
    if (typeof schema.$ref === "string") this.walkRequired(schema.$ref, value, at, found);
    ((schema.allOf as unknown[] | undefined) ?? []).forEach((_, i) =>
      this.walkRequired(`${pointer}/allOf/${i}`, value, at, found),
    );
    for (const key of ["oneOf", "anyOf"] as const) {
      const branches = (schema[key] as unknown[] | undefined) ?? [];
      const index = branches.findIndex((_, i) => this.validator(`${pointer}/${key}/${i}`)(value));
      if (index >= 0) this.walkRequired(`${pointer}/${key}/${index}`, value, at, found);
    }
    if (Array.isArray(value)) {
      if (value.length > 0) this.walkRequired(`${pointer}/items`, value[0], `${at}/0`, found);
      return;
    }
    if (!isObject(value)) return;
    for (const key of (schema.required as string[] | undefined) ?? []) {
      if (key in value) found.push(`${at}/${key}`);
    }
    for (const key of Object.keys((schema.properties as JsonObject | undefined) ?? {})) {
      if (key in value)
        this.walkRequired(`${pointer}/properties/${pointerToken(key)}`, value[key], `${at}/${key}`, found);
    }
  }

  private resolve(ref: string): unknown {
    const pointer = ref.replace(/^[^#]*#/, "");
    let node: unknown = this.spec;
    for (const raw of pointer.split("/").slice(1)) {
      const token = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      node = node !== null && typeof node === "object" ? (node as JsonObject)[token] : undefined;
    }
    return node;
  }

  private checkParameters(op: CompiledOperation, exchange: RestExchange): string[] {
    const itemPointer = `#/paths/${pointerToken(op.template)}`;
    const declared = [
      ...((this.resolve(`${itemPointer}/parameters`) as JsonObject[] | undefined) ?? []).map((p, i) => ({
        p,
        pointer: `${itemPointer}/parameters/${i}/schema`,
      })),
      ...((op.raw.parameters as JsonObject[] | undefined) ?? []).map((p, i) => ({
        p,
        pointer: `${op.pointer}/parameters/${i}/schema`,
      })),
    ];
    const names = [...op.template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    const values = (op.pattern.exec(exchange.path) ?? []).slice(1);
    const given = [
      ...names.map((name, i) => ({ where: "path", name, value: values[i] ?? "" })),
      ...Object.entries(exchange.query).map(([name, value]) => ({ where: "query", name, value })),
    ];
    return given.flatMap(({ where, name, value }) => {
      const label = `${op.operationId} request ${where} parameter ${name}=${JSON.stringify(value)}`;
      const param = declared.find((d) => d.p.in === where && d.p.name === name);
      if (!param) return [`${label}: the spec documents no such parameter`];
      // A parameter travels as text: it fits when the text, or the number or boolean it spells, does.
      const candidates: unknown[] = [value, ...(value.trim() === "" ? [] : [Number(value)])];
      if (value === "true" || value === "false") candidates.push(value === "true");
      const validate = this.validator(param.pointer);
      return candidates.some((c) => validate(c)) ? [] : [`${label}: does not match its schema`];
    });
  }

  private checkRequest(op: CompiledOperation, exchange: RestExchange): string[] {
    const name = op.operationId;
    const requestBody = op.raw.requestBody as JsonObject | undefined;
    const schema = (requestBody?.content as JsonObject | undefined)?.["application/json"];
    if (exchange.requestBody === undefined) {
      return requestBody?.required === true
        ? [`${name} request: the spec requires a body, none was sent`]
        : [];
    }
    if (!isObject(schema)) return [`${name} request: the spec takes no JSON body, one was sent`];
    if (typeof exchange.requestBody === "string") return [`${name} request: the body is not JSON`];
    const pointer = `${op.pointer}/requestBody/content/${pointerToken("application/json")}/schema`;
    return this.run(pointer, exchange.requestBody, `${name} request`);
  }

  private checkResponse(op: CompiledOperation | undefined, name: string, exchange: RestExchange): string[] {
    const label = `${name} ${exchange.status} response`;
    const schema = op ? this.responseSchema(op, exchange.status) : this.errorSchema(exchange.status);
    if (schema === null) {
      return exchange.responseBody === undefined ? [] : [`${label}: the spec says no body, one was sent`];
    }
    if (schema === undefined) return [`${label}: the spec documents no such status`];
    if (exchange.responseBody === undefined) return [`${label}: the spec documents a body, none was sent`];
    return this.run(schema.pointer, exchange.responseBody, label);
  }

  /**
   * The schema of `status` for `op`: its own status, else its `4XX`-style range; null for a response
   * without a body (204). The spec documents no 5xx anywhere: Discord answers them with its error body,
   * so 5xx are checked against the error schema (so are 404s of routes the spec does not have).
   */
  private responseSchema(op: CompiledOperation, status: number): { pointer: string } | null | undefined {
    const responses = op.raw.responses as JsonObject;
    const key = [String(status), `${String(status)[0]}XX`].find((k) => k in responses);
    if (key === undefined) return status >= 500 ? this.errorSchema(status) : undefined;
    let response = responses[key] as JsonObject;
    let pointer = `${op.pointer}/responses/${key}`;
    if (typeof response.$ref === "string") {
      pointer = response.$ref;
      response = this.resolve(response.$ref) as JsonObject;
    }
    const content = response.content as JsonObject | undefined;
    if (!content) return null;
    if (!isObject(content["application/json"])) return undefined;
    return { pointer: `${pointer}/content/${pointerToken("application/json")}/schema` };
  }

  private errorSchema(status: number): { pointer: string } {
    const name = status === 429 ? "ClientRatelimitedResponse" : "ClientErrorResponse";
    return { pointer: `#/components/responses/${name}/content/${pointerToken("application/json")}/schema` };
  }

  /** The compiled validator of the schema at `pointer` (a `#/…` JSON pointer into the spec). */
  private validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${SPEC_ID}${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  private run(pointer: string, body: unknown, label: string): string[] {
    const validate = this.validator(pointer);
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${label} ${describe(e)}`);
  }
}

/** `at /author/discriminator: must have required property 'discriminator' (schema #/required)`. */
function describe(error: ErrorObject): string {
  const pointer =
    error.keyword === "required"
      ? `${error.instancePath}/${String(error.params.missingProperty)}`
      : error.instancePath || "/";
  return `at ${pointer}: ${error.message ?? error.keyword} (schema ${error.schemaPath})`;
}

/**
 * Where the spec contradicts Discord's documentation and what Discord sends, the documented shape wins:
 * - a field error (`errors.content._errors[]`) carries a string code such as "BASE_TYPE_MAX_LENGTH",
 *   where the spec reuses its top-level Error with an integer `code`;
 * - a 429 body has `code` only "for some limits" (the spec requires it on every 429).
 */
function patchSpec(spec: JsonObject): JsonObject {
  const schemas = (spec.components as JsonObject).schemas as Record<string, JsonObject>;
  const inner = schemas.InnerErrors?.properties as Record<string, JsonObject> | undefined;
  if (!inner?._errors) throw new Error("the spec changed: InnerErrors._errors is gone, review patchSpec");
  inner._errors.items = {
    type: "object",
    properties: { code: { type: "string" }, message: { type: "string" } },
    required: ["code", "message"],
  };
  const limited = schemas.RatelimitedResponse?.allOf as JsonObject[] | undefined;
  if (limited?.[0]?.$ref !== "#/components/schemas/Error") {
    throw new Error("the spec changed: RatelimitedResponse no longer starts from Error, review patchSpec");
  }
  limited[0] = {
    type: "object",
    properties: { code: { type: "integer" }, message: { type: "string" } },
    required: ["message"],
  };
  return spec;
}

let loaded: DiscordSpec | undefined;

/** The spec, parsed and compiled once per test file. */
export function discordSpec(): DiscordSpec {
  loaded ??= new DiscordSpec(patchSpec(JSON.parse(readFileSync(SPEC_FILE, "utf8")) as JsonObject));
  return loaded;
}
