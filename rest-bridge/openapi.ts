import fs from 'node:fs';
import path from 'node:path';
import {
  DocumentNode,
  FragmentDefinitionNode,
  GraphQLInterfaceType,
  GraphQLNamedType,
  GraphQLObjectType,
  GraphQLOutputType,
  GraphQLSchema,
  isAbstractType,
  isEnumType,
  isListType,
  isNonNullType,
  isScalarType,
  Kind,
  OperationDefinitionNode,
  SelectionSetNode,
} from 'graphql';
import { ERROR_CODES, type ErrorCode } from '../src/errors';
import { PROJECT_ROOT } from '../src/paths';
import { ERROR_STATUS } from '../src/error-status';
import { metadataText } from '../src/domain/metadata-text';
import {
  COMMON_RESPONSE_HEADERS,
  HEADERS,
  RATE_LIMIT_HEADERS,
  SUCCESS_RESPONSE_HEADERS,
  type HeaderName,
} from './headers';
import type { JsonSchema, Route } from './route';
import { paramSchemas, pathParamNames } from './validate';

export type { JsonSchema } from './route';

export interface OpenApiOptions {
  /** With the schema and the operations, response payloads are typed from each operation's selection. */
  schema?: GraphQLSchema;
  document?: DocumentNode;
  /** The `servers` entry; relative by default so the document works behind any host. */
  serverUrl?: string;
}

const ERROR_DESCRIPTIONS: Record<ErrorCode, string> = {
  BadClientData: 'Invalid payload, parameter or definition',
  Unauthorized: 'Missing or invalid bearer token',
  InsufficientCredits: 'The balance cannot cover the run',
  BudgetExceeded: "The run's max_credits cannot cover it",
  NotAllowed: 'The token is valid but not allowed to do this',
  NotFound: 'No such resource (or route)',
  Conflict: 'The request conflicts with the current state (see the route)',
  IdempotencyKeyReused: 'The Idempotency-Key was already used by the caller with a different request',
  PayloadTooLarge: 'The request body is over 1 MiB',
  RequestTimeout: 'The request body was not received in full within BODY_TIMEOUT_MS; the connection is closed',
  UnsupportedMediaType: 'The request body is not JSON (send Content-Type: application/json)',
  RateLimited: 'Rate limit hit; see Retry-After',
  Internal: 'Unexpected server error (details are logged, never shown)',
};

/** `/circuits/:circuit_uid` → `/circuits/{circuit_uid}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

export const pathParams = pathParamNames;

function packageVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string })
      .version;
  } catch {
    return '0.0.0';
  }
}

// ---------------------------------------------------------------------------------------------
// GraphQL selection → JSON Schema: the REST payload is exactly what the operation selects.

const SCALARS: Record<string, JsonSchema> = {
  String: { type: 'string' },
  ID: { type: 'string' },
  Int: { type: 'integer' },
  Float: { type: 'number' },
  Boolean: { type: 'boolean' },
  DateTimeISO: { type: 'string', format: 'date-time' },
  DateTime: { type: 'string', format: 'date-time' },
  JSON: { description: 'Any JSON value' },
  JSONObject: { type: 'object', additionalProperties: true, description: 'A JSON object (any keys)' },
};

/** A free-form JSON object that says so (openapi-typescript: `{[key: string]: unknown}`, not `Record<string, never>`). */
const FREE_OBJECT: JsonSchema = { type: 'object', additionalProperties: true };
const ANY_JSON: JsonSchema = { description: 'Any JSON value' };

/**
 * JSON-scalar fields whose shape is known: the document declares it rather than "any JSON", so a generated client types it (docs/typed-clients.md).
 * Keyed by `Type.field` of the GraphQL schema; `$ref`s name components/schemas below.
 */
const JSON_FIELD_SHAPES: Record<string, JsonSchema> = {
  'CircuitRun.resultBlob': { $ref: '#/components/schemas/RunResult' },
  'CircuitRun.metrics': { ...FREE_OBJECT, description: "Values of the circuit's metric configuration ({name: value})" },
  'CircuitRun.input': { ...FREE_OBJECT, description: "The run's input" },
  'CircuitRunComparison.output': { $ref: '#/components/schemas/RunComparisonEntry' },
  'CircuitRunComparison.steps': {
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/RunComparisonEntry' },
  },
  'CircuitRunEvent.data': {
    anyOf: [FREE_OBJECT, { type: 'null' }],
    description:
      'step events: {step_id, kind, status, started_at, ended_at?, credits?, error?}; output events: {step_id, delta}',
  },
  'CircuitSchedule.input': { ...FREE_OBJECT, description: 'The input of every run' },
  'CircuitVersion.definition': {
    ...FREE_OBJECT,
    description: 'The circuit definition (its format: GET /api/v1/definition-schema.json)',
  },
  'CircuitVersion.querySchema': { ...FREE_OBJECT, description: 'The JSON Schema (2020-12) a query input must satisfy' },
};

/** Component schemas of the JSON-scalar shapes above. */
const SHAPE_COMPONENTS: Record<string, JsonSchema> = {
  RunResult: {
    type: 'object',
    description: "A COMPLETED run's result: its output and each step's record",
    required: ['output', 'steps'],
    properties: {
      output: {
        ...ANY_JSON,
        description: "The circuit's output (its `output` template rendered); see the version's output_schema",
      },
      steps: {
        type: 'object',
        additionalProperties: { $ref: '#/components/schemas/RunStepResult' },
        description: 'One record per step id',
      },
    },
  },
  RunStepResult: {
    type: 'object',
    required: ['kind', 'output', 'started_at', 'ended_at', 'credits'],
    properties: {
      kind: { type: 'string', description: 'The step kind (llm, http, transform, …)' },
      output: { ...ANY_JSON, description: "The step's output" },
      started_at: { type: 'string', format: 'date-time' },
      ended_at: { type: 'string', format: 'date-time' },
      credits: { type: 'number', description: 'Credits the step cost' },
      usage: { $ref: '#/components/schemas/LlmUsage' },
      cached: { type: 'boolean', description: 'Served from the step cache: no upstream call, 0 credits' },
      replayed: {
        type: 'boolean',
        description: "A recorded replay reused the original run's output: no upstream call, 0 credits",
      },
    },
  },
  LlmUsage: {
    type: 'object',
    description: 'Tokens an `llm` step used (all attempts); absent on other kinds',
    required: ['prompt_tokens', 'completion_tokens', 'total_tokens'],
    properties: {
      prompt_tokens: { type: 'integer' },
      completion_tokens: { type: 'integer' },
      total_tokens: { type: 'integer' },
    },
  },
  RunComparisonEntry: {
    type: 'object',
    required: ['status'],
    properties: { status: { type: 'string', enum: ['same', 'changed', 'added', 'removed'] }, a: ANY_JSON, b: ANY_JSON },
  },
};

/**
 * Every object schema without `properties` or `additionalProperties` is made to say it is free-form,
 * so generators read it as `{[key: string]: unknown}` (openapi-typescript reads a bare `type: object`
 * as an empty object).
 */
function declareFreeForm(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(declareFreeForm);
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) out[key] = declareFreeForm(child);
  const isObject = out.type === 'object' || (Array.isArray(out.type) && out.type.includes('object'));
  if (
    isObject &&
    out.properties === undefined &&
    out.additionalProperties === undefined &&
    out.patternProperties === undefined
  ) {
    out.additionalProperties = true;
  }
  return out;
}

function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  if (schema.type === undefined && !schema.$ref) return schema; // "any" already admits null
  return { anyOf: [schema, { type: 'null' }] };
}

class SelectionConverter {
  private readonly fragments = new Map<string, FragmentDefinitionNode>();

  constructor(
    private readonly schema: GraphQLSchema,
    document: DocumentNode,
  ) {
    for (const definition of document.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) this.fragments.set(definition.name.value, definition);
    }
  }

  type(type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined): JsonSchema {
    if (isNonNullType(type)) return this.nonNull(type.ofType, selectionSet);
    return nullable(this.nonNull(type, selectionSet));
  }

  private nonNull(type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined): JsonSchema {
    if (isListType(type)) return { type: 'array', items: this.type(type.ofType, selectionSet) };
    if (isNonNullType(type)) return this.nonNull(type.ofType, selectionSet);
    if (isScalarType(type)) return { ...(SCALARS[type.name] ?? { description: `${type.name} scalar` }) };
    if (isEnumType(type)) return { type: 'string', enum: type.getValues().map((v) => v.value as string) };
    return selectionSet ? this.object(type, selectionSet) : { type: 'object' };
  }

  /** Fields selected on an object, interface or union; conditional fragments make optional fields. */
  object(type: GraphQLNamedType, selectionSet: SelectionSetNode): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    const required = new Set<string>();
    this.collect(type, selectionSet, true, properties, required);
    return { type: 'object', properties, required: [...required] };
  }

  private collect(
    type: GraphQLNamedType,
    selectionSet: SelectionSetNode,
    always: boolean,
    properties: Record<string, JsonSchema>,
    required: Set<string>,
  ): void {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        if (selection.name.value === '__typename') {
          properties[key] = { type: 'string' };
        } else {
          const fields = 'getFields' in type ? (type as GraphQLObjectType | GraphQLInterfaceType).getFields() : {};
          const definition = fields[selection.name.value];
          const shape = JSON_FIELD_SHAPES[`${type.name}.${selection.name.value}`];
          properties[key] =
            definition && shape
              ? isNonNullType(definition.type)
                ? { ...shape }
                : nullable(shape)
              : definition
                ? this.type(definition.type, selection.selectionSet)
                : {};
        }
        if (always) required.add(key);
      } else {
        const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? this.fragments.get(selection.name.value) : selection;
        if (!fragment) continue;
        const conditionName = fragment.typeCondition?.name.value;
        const condition = conditionName ? this.schema.getType(conditionName) : type;
        const unconditional =
          !conditionName || conditionName === type.name || (isAbstractType(condition ?? type) && !isAbstractType(type));
        this.collect(condition ?? type, fragment.selectionSet, always && unconditional, properties, required);
      }
    }
  }

  /** The schema of `data[route.result]` for the route's operation, or undefined when it cannot be found. */
  result(document: DocumentNode, route: Route): JsonSchema | undefined {
    const operation = document.definitions.find(
      (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION && d.name?.value === route.operation,
    );
    if (!operation) return undefined;
    const root =
      operation.operation === 'mutation'
        ? this.schema.getMutationType()
        : operation.operation === 'subscription'
          ? this.schema.getSubscriptionType()
          : this.schema.getQueryType();
    if (!root) return undefined;
    for (const selection of operation.selectionSet.selections) {
      if (selection.kind !== Kind.FIELD || (selection.alias?.value ?? selection.name.value) !== route.result) continue;
      const field = root.getFields()[selection.name.value];
      return field ? this.type(field.type, selection.selectionSet) : undefined;
    }
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------

function errorRef(code: ErrorCode) {
  return { $ref: `#/components/responses/${code}` };
}

/** The codes every route of its kind may answer, then the row's own (with what they mean there). */
function errorResponses(route: Route): Record<string, unknown> {
  const codes = new Map<ErrorCode, string | undefined>();
  codes.set('BadClientData', undefined);
  // A token that is sent is checked on every route, also where none is needed.
  codes.set(
    'Unauthorized',
    route.auth === 'none'
      ? 'An Authorization header was sent but its token is invalid or revoked (no token is needed here)'
      : undefined,
  );
  if (route.auth !== 'none') codes.set('NotAllowed', undefined);
  codes.set('NotFound', undefined);
  if (route.body) {
    codes.set('PayloadTooLarge', undefined);
    codes.set('RequestTimeout', undefined);
    codes.set('UnsupportedMediaType', undefined);
  }
  for (const [code, description] of Object.entries(route.errors ?? {}) as Array<[ErrorCode, string]>)
    codes.set(code, description);
  codes.set('Internal', undefined);
  const sorted = [...codes].sort(([a], [b]) => ERROR_STATUS[a] - ERROR_STATUS[b]);
  // A row's own response headers may come on its errors too (a search refused after it was counted).
  const routeHeaders = route.responseHeaders ?? [];
  return Object.fromEntries(
    sorted.map(([code, description]) => [
      String(ERROR_STATUS[code]),
      description || routeHeaders.length
        ? errorResponse(code, description ?? ERROR_DESCRIPTIONS[code], routeHeaders)
        : errorRef(code),
    ]),
  );
}

/** Headers that come with an error whatever the route. */
const ERROR_HEADERS: Partial<Record<ErrorCode, HeaderName[]>> = {
  RateLimited: ['Retry-After', ...RATE_LIMIT_HEADERS],
};

function errorResponse(code: ErrorCode, description: string, extraHeaders: HeaderName[] = []): Record<string, unknown> {
  return {
    description: `${code}: ${description}`,
    headers: headerRefs([...COMMON_RESPONSE_HEADERS, ...(ERROR_HEADERS[code] ?? []), ...extraHeaders]),
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  };
}

function headerRefs(names: HeaderName[]): Record<string, unknown> {
  return Object.fromEntries([...new Set(names)].map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

/** A GraphQL-derived object schema with the fields the bridge leaves out while null made optional (and not null). */
function withOptionalFields(schema: JsonSchema | undefined, fields: string[] | undefined): JsonSchema | undefined {
  const isObject =
    schema && (schema.type === 'object' || (Array.isArray(schema.type) && schema.type.includes('object')));
  if (!schema || !fields?.length || !isObject) return schema;
  const properties = { ...(schema.properties as Record<string, JsonSchema>) };
  // `list[].name`: optional in each item of the array `list`.
  const inItems = new Map<string, string[]>();
  for (const field of fields.filter((f) => f.includes('[].'))) {
    const [list, name] = field.split('[].');
    inItems.set(list, [...(inItems.get(list) ?? []), name]);
  }
  for (const [list, names] of inItems) {
    const property = properties[list];
    if (property && typeof property.items === 'object')
      properties[list] = { ...property, items: withOptionalFields(property.items as JsonSchema, names) };
  }
  for (const field of fields) {
    const property = properties[field];
    if (!property) continue;
    if (Array.isArray(property.type)) {
      const types = property.type.filter((t) => t !== 'null');
      properties[field] = { ...property, type: types.length === 1 ? types[0] : types };
    } else if (Array.isArray(property.anyOf)) {
      const rest = (property.anyOf as JsonSchema[]).filter((s) => s.type !== 'null');
      properties[field] = rest.length === 1 ? rest[0] : { ...property, anyOf: rest };
    }
  }
  return {
    ...schema,
    properties,
    required: ((schema.required as string[]) ?? []).filter((name) => !fields.includes(name)),
  };
}

/** A 304 for a route that takes `If-None-Match` (a conditional GET; Express compares the ETag of the answer). */
function notModifiedResponse(route: Route): Record<string, unknown> {
  if (!route.requestHeaders?.includes('If-None-Match')) return {};
  return {
    '304': {
      description:
        'Not Modified: the answer has the ETag sent in `If-None-Match`; no body. The request was still authenticated and authorized.',
      headers: headerRefs([...COMMON_RESPONSE_HEADERS, ...SUCCESS_RESPONSE_HEADERS, 'ETag']),
    },
  };
}

function successResponse(route: Route, payload: JsonSchema | undefined): Record<string, unknown> {
  const shape = route.shape ?? 'object';
  const headers = headerRefs([
    ...COMMON_RESPONSE_HEADERS,
    ...SUCCESS_RESPONSE_HEADERS,
    ...(route.responseHeaders ?? []),
  ]);
  if (shape === 'redirect') {
    const { description: locationDescription, schema: locationSchema } = HEADERS.Location;
    return {
      '302': {
        description: 'Redirect to the target URL',
        headers: { ...headers, Location: { description: locationDescription, schema: locationSchema, required: true } },
      },
    };
  }
  if (shape === 'event-stream') {
    return {
      '200': {
        description:
          "A `text/event-stream` (server-sent events). Each event's `data:` is one JSON object: for `event: state`, the same JSON as the payload of the route's GET. Comments (`: keep-alive`) keep the connection open; the stream closes after a terminal state.",
        headers,
        content: { 'text/event-stream': { schema: { type: 'string' } } },
      },
      '204': {
        description:
          'No Content: the `Last-Event-ID` sent names an event after which nothing more will come (the run had already ended); an EventSource stops reconnecting on 204 (HTML Living Standard, server-sent events).',
        headers: headerRefs(COMMON_RESPONSE_HEADERS),
      },
    };
  }
  if (shape === 'typescript') {
    return {
      '200': {
        description: 'A TypeScript module (source text)',
        headers,
        content: { 'application/typescript': { schema: { type: 'string' } } },
      },
    };
  }
  if (shape === 'page') {
    const pageData = payload && (payload.properties as Record<string, JsonSchema> | undefined)?.data;
    const items = withOptionalFields(pageData?.items as JsonSchema | undefined, route.omitWhenNull) ?? {};
    return {
      '200': {
        description: 'One page of results',
        headers,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['meta', 'data'],
              properties: { meta: { $ref: '#/components/schemas/PageMeta' }, data: { type: 'array', items } },
            },
          },
        },
      },
    };
  }
  return {
    '200': {
      description: 'Success',
      headers,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['status', 'payload'],
            properties: {
              status: { const: 'success' },
              payload: withOptionalFields(payload, route.omitWhenNull) ?? {},
              notices: { $ref: '#/components/schemas/Notices' },
            },
          },
        },
      },
    },
  };
}

function security(route: Route): Array<Record<string, string[]>> {
  if (route.auth === 'required') return [{ bearerAuth: [] }];
  if (route.auth === 'optional') return [{}, { bearerAuth: [] }];
  return [];
}

function parametersOf(route: Route): unknown[] {
  const names = pathParamNames(route.path);
  const pathSchemas = paramSchemas(route, names);
  const parameters: unknown[] = names.map((name) => ({ name, in: 'path', required: true, schema: pathSchemas[name] }));
  for (const [name, parameter] of Object.entries(route.query ?? {})) {
    parameters.push({
      name,
      in: 'query',
      required: parameter.required ?? false,
      schema: parameter.schema,
      ...(parameter.description ? { description: parameter.description } : {}),
    });
  }
  for (const name of route.requestHeaders ?? []) parameters.push({ $ref: `#/components/parameters/${name}` });
  return parameters;
}

function description(route: Route): string | undefined {
  const parts = [
    route.description,
    route.queryPrefix?.description,
    route.auth === 'optional'
      ? 'Authentication is optional: a bearer token widens what the caller can see.'
      : undefined,
  ];
  const text = parts.filter(Boolean).join('\n\n');
  return text || undefined;
}

/**
 * The OpenAPI 3.1 document of the REST API, generated from the route table (one operation per row):
 * paths and parameters, bearer security (optional auth as `[{}, {bearerAuth: []}]`), request bodies
 * from the row's body fields, and responses in the envelopes the bridge produces.
 */
const TEXT_FIELDS = new Set(['summary', 'description', 'title']);

/** Every summary, description and title of the document through the one metadata sanitizer (no control characters). */
function metadataTexts<T>(value: T): T {
  if (Array.isArray(value)) return value.map(metadataTexts) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [
      key,
      typeof child === 'string' && TEXT_FIELDS.has(key) ? metadataText(child) : metadataTexts(child),
    ]),
  ) as T;
}

export function buildOpenApi(routes: Route[], options: OpenApiOptions = {}): Record<string, unknown> {
  const converter =
    options.schema && options.document ? new SelectionConverter(options.schema, options.document) : undefined;
  const paths: Record<string, Record<string, unknown>> = {};
  const seenIds = new Map<string, number>();
  for (const route of routes) {
    const base = route.operationId ?? route.operation;
    const count = seenIds.get(base) ?? 0;
    seenIds.set(base, count + 1);
    // A row sharing its GraphQL operation with another names itself (`operationId`); a clash left over is numbered.
    const operationId = count === 0 ? base : `${base}${count + 1}`;
    const parameters = parametersOf(route);
    const payload = converter && options.document ? converter.result(options.document, route) : undefined;
    const operation: Record<string, unknown> = {
      operationId,
      summary: route.summary,
      tags: [route.tag],
      security: security(route),
      ...(description(route) ? { description: description(route) } : {}),
      ...(parameters.length ? { parameters } : {}),
      responses: { ...successResponse(route, payload), ...notModifiedResponse(route), ...errorResponses(route) },
      'x-graphql-operation': route.operation,
    };
    if (route.body) {
      const { properties, required = [], description: bodyDescription } = route.body;
      operation.requestBody = {
        required: required.length > 0,
        ...(bodyDescription ? { description: bodyDescription } : {}),
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties,
              ...(required.length ? { required } : {}),
              additionalProperties: false,
            },
          },
        },
      };
    }
    const key = openApiPath(route.path);
    paths[key] = { ...paths[key], [route.method.toLowerCase()]: operation };
  }
  const tags = [...new Set(routes.map((r) => r.tag))].map((name) => ({ name }));
  return metadataTexts(
    declareFreeForm({
      openapi: '3.1.0',
      info: {
        title: 'Circuit Service REST API',
        version: packageVersion(),
        description:
          'Versioned, reusable units of AI logic. This REST API is a thin bridge over the GraphQL API at /graphql: every path runs one named GraphQL operation (`x-graphql-operation`). Single objects come as `{status: "success", payload}`, lists as `{meta, data}`, errors as `{error: {message, code}}`.',
      },
      servers: [{ url: options.serverUrl ?? '/api/v1' }],
      tags,
      paths,
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API token (`cst_…`) from /settings or the operator CLI (`circuits token create`).',
          },
        },
        schemas: {
          Error: {
            type: 'object',
            required: ['error'],
            properties: {
              error: {
                type: 'object',
                required: ['message', 'code'],
                properties: { message: { type: 'string' }, code: { type: 'string', enum: [...ERROR_CODES] } },
              },
            },
          },
          PageMeta: {
            type: 'object',
            required: ['total_count', 'limit', 'page'],
            properties: {
              total_count: { type: 'integer' },
              limit: { type: 'integer' },
              page: { type: 'integer', minimum: 1 },
            },
          },
          Notices: {
            type: 'array',
            description: 'Present when something about the resource needs attention, e.g. it is deprecated.',
            items: {
              type: 'object',
              required: ['code', 'message'],
              properties: { code: { type: 'string' }, message: { type: 'string' } },
            },
          },
          ...SHAPE_COMPONENTS,
        },
        responses: Object.fromEntries(
          ERROR_CODES.map((code) => [
            code,
            {
              ...errorResponse(code, ERROR_DESCRIPTIONS[code]),
              description: `${ERROR_STATUS[code]} ${code}: ${ERROR_DESCRIPTIONS[code]}`,
            },
          ]),
        ),
        headers: Object.fromEntries(
          Object.entries(HEADERS)
            .filter(([, h]) => h.in === 'response')
            .map(([name, h]) => [name, { description: h.description, schema: h.schema }]),
        ),
        parameters: Object.fromEntries(
          Object.entries(HEADERS)
            .filter(([, h]) => h.in === 'request')
            .map(([name, h]) => [
              name,
              { name, in: 'header', required: false, description: h.description, schema: h.schema },
            ]),
        ),
      },
    }) as Record<string, unknown>,
  );
}
