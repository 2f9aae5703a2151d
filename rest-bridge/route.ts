import type { ErrorCode } from '../src/errors';
import type { HeaderName } from './headers';
import type { JsonSchema } from './json-schema';

export type { JsonSchema } from './json-schema';

/** What the bridge hands a route's `variables` function: the request after the edge checked it. */
export interface RouteInput {
  params: Record<string, string>;
  /** Query parameters converted to their declared types (`"10"` → 10 for an integer). */
  query: Record<string, unknown>;
  body: Record<string, unknown>;
  /** Request headers, lower-case names (e.g. `idempotency-key`); always set by the bridge. */
  headers?: Record<string, string | undefined>;
}

/** One query parameter, as an OpenAPI parameter object has it. */
export interface QueryParameter {
  /** JSON Schema of the value; `integer`, `number` and `boolean` are converted from the query string first. */
  schema: JsonSchema;
  required?: boolean;
  description?: string;
}

/** The JSON object a route accepts as its body. */
export interface BodySchema {
  /** One JSON Schema per field (nested objects are ordinary JSON Schema, with their own `required`). */
  properties: Record<string, JsonSchema>;
  /** Top-level fields that must be present. */
  required?: string[];
  description?: string;
}

/**
 * One documented REST path: the single source of its validation, its execution and its OpenAPI
 * operation (rest-bridge/openapi.ts).
 *
 * How a row declares its input (checked at the edge by Ajv, rest-bridge/validate.ts, before the
 * operation runs; errors name the REST field in snake_case, e.g. `is_private must be boolean`):
 * - `params`: JSON Schema per `:name` in the path; a parameter left out is `{type: "string"}`.
 *   A value that fails its schema names nothing, so it is 404 (a malformed uid is an unknown one).
 *   Use `UID` from rest-bridge/schemas.ts for uids.
 * - `query`: per parameter `{schema, required?, description?}`; `PAGE_QUERY` for `limit`/`page`.
 *   Unknown query parameters are ignored; a parameter given twice is 400.
 * - `body`: `{properties, required?}` of a JSON object; any other top-level field is 400
 *   (`additionalProperties: false` is implied; say it yourself in nested objects). A row without
 *   `body` takes no body and ignores one; a row with `body` refuses a body that is not JSON (415).
 * - `requestHeaders` / `responseHeaders`: names from rest-bridge/headers.ts (documented there once).
 * - `errors`: the codes this route answers beyond the ones every route of its kind may answer
 *   (400, 404, 500; 401/403 with auth; 413/415 with a body), each with what it means here.
 *
 * The bridge runs `operation` (a named operation in schema/operations/*.graphql) with
 * `variables(input)` (a variable mapped to `undefined`, a field the client left out, is not sent, so
 * its argument is absent, while a JSON `null` is sent as null: for a PUT, "unchanged" against "clear
 * it", where the field's schema allows null) and wraps `data[result]`:
 * - `object`: `{status: "success", payload}` (plus `notices` when the operation added any);
 * - `page`: the result holds `total_count`, `limit`, `page`, `data` → `{meta: {...}, data}`;
 * - `redirect`: the result is a URL → 302 with `Location`;
 * - `typescript`: the result is TypeScript source → 200 `application/typescript; charset=utf-8`;
 * - `event-stream`: documented and validated here but served by its own handler (server-sent
 *   events whose `data:` is the operation's result); the bridge does not mount it.
 */
export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  operation: string;
  /** The OpenAPI operationId when it is not `operation` (a second row running the same operation). */
  operationId?: string;
  summary: string;
  /** Longer text for the reference, when the summary is not enough. */
  description?: string;
  auth: 'none' | 'optional' | 'required';
  params?: Record<string, JsonSchema>;
  query?: Record<string, QueryParameter>;
  /**
   * Query parameters named `<name>.<key>` (any key, URL-decoded): collected as `query[name] = {key: value}`,
   * each value a string given once; absent when none is sent. Documented by `description`.
   */
  queryPrefix?: { name: string; description: string };
  body?: BodySchema;
  requestHeaders?: HeaderName[];
  responseHeaders?: HeaderName[];
  errors?: Partial<Record<ErrorCode, string>>;
  variables: (input: RouteInput) => Record<string, unknown>;
  result: string;
  shape?: 'object' | 'page' | 'redirect' | 'event-stream' | 'typescript';
  /** Payload fields left out while null (the API contract: "absent while …"), in objects and in page items; optional in the document. */
  omitWhenNull?: string[];
  /**
   * The operation's one root field may offer to share the bytes of its answer (AppContext.sharedAnswers,
   * set by its resolver when the answer follows from unchanging data): a large answer is then serialised
   * once for every request answered the same, instead of once per request. Only for a 200 `object` answer.
   */
  sharesAnswer?: boolean;
  tag: string;
}
