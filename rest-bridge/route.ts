/** What the bridge hands a route's `variables` function: the decoded request. */
export interface RouteInput {
  params: Record<string, string>;
  query: Record<string, string | number | boolean | undefined>;
  body: Record<string, unknown>;
  /** Request headers, lower-case names (e.g. `idempotency-key`); always set by the bridge. */
  headers?: Record<string, string | undefined>;
}

export type QueryParamType = 'int' | 'string' | 'boolean';

/**
 * One documented REST path. The bridge runs `operation` (a named operation in
 * schema/operations/*.graphql) with `variables(input)` and wraps `data[result]`:
 * - `object`: `{status: "success", payload}` (plus `notices` when the operation added any);
 * - `page`: the result holds `total_count`, `limit`, `page`, `data` → `{meta: {...}, data}`;
 * - `redirect`: the result is a URL → 302 with `Location`.
 */
export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  operation: string;
  summary: string;
  auth: 'none' | 'optional' | 'required';
  /** Query parameters, decoded and checked by type (and `oneOf`, for enumerations) before the operation runs. */
  query?: Record<string, { type: QueryParamType; required?: boolean; oneOf?: string[]; description?: string }>;
  /** Body fields accepted; any other field is rejected as BadClientData. */
  body?: Record<string, { type: 'string' | 'boolean' | 'integer' | 'object'; required?: boolean; description?: string }>;
  variables: (input: RouteInput) => Record<string, unknown>;
  result: string;
  shape?: 'object' | 'page' | 'redirect';
  /** Payload fields left out while null (spec: "absent while …"), in objects and in page items. */
  omitWhenNull?: string[];
  tag: string;
}
