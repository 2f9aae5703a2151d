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
import { ERROR_STATUS } from './error-status';
import type { Route } from './route';

/** A JSON Schema (draft 2020-12, as OpenAPI 3.1 uses it). */
export type JsonSchema = Record<string, unknown>;

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
  NotAllowed: 'The token is valid but not allowed to do this',
  NotFound: 'No such resource (or route)',
  Conflict: 'The name is already taken',
  PayloadTooLarge: 'The request body is too large',
  RateLimited: 'Rate limit hit; see Retry-After',
  Internal: 'Unexpected server error (details are logged, never shown)',
};

/** `/circuits/:circuit_uid` → `/circuits/{circuit_uid}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

export function pathParams(expressPath: string): string[] {
  return [...expressPath.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]);
}

function packageVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
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
  JSONObject: { type: 'object' },
};

function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  if (schema.type === undefined && !schema.$ref) return schema; // "any" already admits null
  return { anyOf: [schema, { type: 'null' }] };
}

class SelectionConverter {
  private readonly fragments = new Map<string, FragmentDefinitionNode>();

  constructor(private readonly schema: GraphQLSchema, document: DocumentNode) {
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

  private collect(type: GraphQLNamedType, selectionSet: SelectionSetNode, always: boolean, properties: Record<string, JsonSchema>, required: Set<string>): void {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        if (selection.name.value === '__typename') {
          properties[key] = { type: 'string' };
        } else {
          const fields = 'getFields' in type ? (type as GraphQLObjectType | GraphQLInterfaceType).getFields() : {};
          const definition = fields[selection.name.value];
          properties[key] = definition ? this.type(definition.type, selection.selectionSet) : {};
        }
        if (always) required.add(key);
      } else {
        const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? this.fragments.get(selection.name.value) : selection;
        if (!fragment) continue;
        const conditionName = fragment.typeCondition?.name.value;
        const condition = conditionName ? this.schema.getType(conditionName) : type;
        const unconditional = !conditionName || conditionName === type.name || (isAbstractType(condition ?? type) && !isAbstractType(type));
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
    const root = operation.operation === 'mutation' ? this.schema.getMutationType() : operation.operation === 'subscription' ? this.schema.getSubscriptionType() : this.schema.getQueryType();
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

function errorResponses(route: Route): Record<string, unknown> {
  const codes: ErrorCode[] = ['BadClientData'];
  if (route.auth !== 'none') codes.push('Unauthorized', 'NotAllowed');
  codes.push('NotFound');
  if (/\/query$/.test(route.path)) codes.push('InsufficientCredits');
  if (route.method === 'POST' || route.method === 'PUT') codes.push('Conflict', 'PayloadTooLarge');
  if (route.path === '/search') codes.push('RateLimited');
  codes.push('Internal');
  return Object.fromEntries(codes.map((code) => [String(ERROR_STATUS[code]), errorRef(code)]));
}

function querySchema(type: 'int' | 'string' | 'boolean'): JsonSchema {
  return type === 'int' ? { type: 'integer' } : type === 'boolean' ? { type: 'boolean' } : { type: 'string' };
}

function bodySchema(route: Route): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, field] of Object.entries(route.body ?? {})) {
    properties[name] = { type: field.type, ...(field.description ? { description: field.description } : {}) };
    if (field.required) required.push(name);
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
}

function successResponse(route: Route, payload: JsonSchema | undefined): Record<string, unknown> {
  const shape = route.shape ?? 'object';
  if (shape === 'redirect') {
    return {
      '302': {
        description: 'Redirect to the target URL',
        headers: { Location: { description: 'The target URL (a signed, expiring storage URL)', schema: { type: 'string', format: 'uri' } } },
      },
    };
  }
  if (shape === 'page') {
    const pageData = payload && (payload.properties as Record<string, JsonSchema> | undefined)?.data;
    const items = (pageData?.items as JsonSchema | undefined) ?? {};
    return {
      '200': {
        description: 'One page of results',
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
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['status', 'payload'],
            properties: {
              status: { const: 'success' },
              payload: payload ?? {},
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

/** Paths the route table cannot express (streams), documented beside it. */
function extraPaths(): Record<string, Record<string, unknown>> {
  return {
    '/circuit-runs/{uid}/events': {
      get: {
        operationId: 'StreamCircuitRunEvents',
        summary: 'Live updates of a run (server-sent events)',
        description:
          'A `text/event-stream`: the first event is the current run, then one `event: state` per state change whose `data:` is the same JSON as the payload of GET /circuit-runs/{uid}. The stream closes after a terminal state. Same authentication as the GET.',
        tags: ['Runs'],
        security: [{}, { bearerAuth: [] }],
        parameters: [{ name: 'uid', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '200': { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
          '401': errorRef('Unauthorized'),
          '403': errorRef('NotAllowed'),
          '404': errorRef('NotFound'),
        },
      },
    },
  };
}

/**
 * The OpenAPI 3.1 document of the REST API, generated from the route table (one operation per row):
 * paths and parameters, bearer security (optional auth as `[{}, {bearerAuth: []}]`), request bodies
 * from the row's body fields, and responses in the envelopes the bridge produces.
 */
export function buildOpenApi(routes: Route[], options: OpenApiOptions = {}): Record<string, unknown> {
  const converter = options.schema && options.document ? new SelectionConverter(options.schema, options.document) : undefined;
  const paths: Record<string, Record<string, unknown>> = {};
  const seenIds = new Map<string, number>();
  for (const route of routes) {
    const count = seenIds.get(route.operation) ?? 0;
    seenIds.set(route.operation, count + 1);
    const operationId = count === 0 ? route.operation : `${route.operation}_${route.method.toLowerCase()}${count + 1}`;
    const parameters: unknown[] = pathParams(route.path).map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
    for (const [name, spec] of Object.entries(route.query ?? {})) {
      parameters.push({ name, in: 'query', required: spec.required ?? false, schema: spec.oneOf ? { type: 'string', enum: spec.oneOf } : querySchema(spec.type), ...(spec.description ? { description: spec.description } : {}) });
    }
    const payload = converter && options.document ? converter.result(options.document, route) : undefined;
    const operation: Record<string, unknown> = {
      operationId,
      summary: route.summary,
      tags: [route.tag],
      security: security(route),
      ...(route.auth === 'optional' ? { description: 'Authentication is optional: a bearer token widens what the caller can see.' } : {}),
      ...(parameters.length ? { parameters } : {}),
      responses: { ...successResponse(route, payload), ...errorResponses(route) },
      'x-graphql-operation': route.operation,
    };
    if (route.body) {
      operation.requestBody = {
        required: Object.values(route.body).some((field) => field.required),
        content: { 'application/json': { schema: bodySchema(route) } },
      };
    }
    const key = openApiPath(route.path);
    paths[key] = { ...paths[key], [route.method.toLowerCase()]: operation };
  }
  for (const [key, item] of Object.entries(extraPaths())) {
    for (const [method, operation] of Object.entries(item)) {
      if (!paths[key]?.[method]) paths[key] = { ...paths[key], [method]: operation };
    }
  }

  const tags = [...new Set(routes.map((r) => r.tag).concat(['Runs']))].map((name) => ({ name }));
  return {
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
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API token (`cst_…`) from /settings or `npx circuits token create`.' },
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
          properties: { total_count: { type: 'integer' }, limit: { type: 'integer' }, page: { type: 'integer', minimum: 1 } },
        },
        Notices: {
          type: 'array',
          description: 'Present when something about the resource needs attention, e.g. it is deprecated.',
          items: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } },
        },
      },
      responses: Object.fromEntries(ERROR_CODES.map((code) => [code, {
        description: `${ERROR_STATUS[code]} ${code}: ${ERROR_DESCRIPTIONS[code]}`,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      }])),
    },
  };
}
