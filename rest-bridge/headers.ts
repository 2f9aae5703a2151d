import type { JsonSchema } from './json-schema';

export interface HeaderSpec {
  /** Sent by the client (a route lists it in `requestHeaders`) or by the service (`responseHeaders`). */
  in: 'request' | 'response';
  description: string;
  schema: JsonSchema;
}

/**
 * Every header the REST API reads or answers beyond plain HTTP, documented once: routes name them
 * (`requestHeaders`, `responseHeaders`), the OpenAPI document carries each under
 * `components.parameters` / `components.headers`, and the edge validates request headers.
 */
export const HEADERS = {
  'Idempotency-Key': {
    in: 'request',
    description:
      'Makes a retried POST safe: the same caller sending the same key (printable ASCII, at most 255 characters) within 24 hours gets the first answer again and starts no second run. The same key with a different request body is 409 Conflict.',
    schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
  },
  Prefer: {
    in: 'request',
    description: 'RFC 7240 preferences; preferences the route does not know are ignored.',
    schema: { type: 'string' },
  },
  'If-None-Match': {
    in: 'request',
    description:
      'RFC 9110 conditional GET: the `ETag` of the copy the client holds (or several, comma-separated, or `*`). When the answer would have that ETag it is 304 Not Modified without a body, so a client polling a run downloads it only when it changed.',
    schema: { type: 'string' },
  },
  'Last-Event-ID': {
    in: 'request',
    description:
      'Server-sent events: the `id:` of the last event the client received; the stream resumes after it (an EventSource sends it when it reconnects).',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    in: 'response',
    description:
      'The quota policy (IETF httpapi RateLimit fields draft): a structured-field list of one item, the policy name with its quota `q` and window `w` in seconds, e.g. `"runs";q=600;w=60`.',
    schema: { type: 'string', pattern: '^"[a-z-]+";q=[0-9]+;w=[0-9]+$' },
  },
  RateLimit: {
    in: 'response',
    description:
      'What is left of the quota (IETF httpapi RateLimit fields draft): the policy name with the requests remaining `r` and the seconds `t` until the window resets, e.g. `"runs";r=599;t=42`.',
    schema: { type: 'string', pattern: '^"[a-z-]+";r=[0-9]+;t=[0-9]+$' },
  },
  'RateLimit-Limit': {
    in: 'response',
    description: 'Legacy (earlier drafts; RateLimit-Policy says the same): requests allowed in the current window.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'RateLimit-Remaining': {
    in: 'response',
    description: 'Legacy (earlier drafts; RateLimit says the same): requests left in the current window.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'RateLimit-Reset': {
    in: 'response',
    description: 'Legacy (earlier drafts; RateLimit says the same): seconds until the window resets.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'Retry-After': {
    in: 'response',
    description: 'Seconds to wait before retrying (RFC 9110).',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  Deprecation: {
    in: 'response',
    description:
      'RFC 9745: present when the response is about a deprecated circuit, one of its versions or one of its runs; `@` and the Unix time (seconds) at which the circuit was deprecated. The body also carries a `deprecated` notice.',
    schema: { type: 'string', pattern: '^@-?[0-9]+$' },
  },
  ETag: {
    in: 'response',
    description:
      'RFC 9110 weak entity tag of the response body: send it back in `If-None-Match` to be answered 304 while the body is the same.',
    schema: { type: 'string', pattern: '^(W/)?"[^"]*"$' },
  },
  'Preference-Applied': {
    in: 'response',
    description: 'RFC 7240: the preferences of `Prefer` that were honoured, e.g. `wait=30`.',
    schema: { type: 'string' },
  },
  Location: {
    in: 'response',
    description: 'The target URL (a signed, expiring storage URL).',
    schema: { type: 'string', format: 'uri' },
  },
  'X-Request-Id': {
    in: 'response',
    description:
      'The request id on every response and on the request’s log lines; a valid incoming `X-Request-Id` is echoed.',
    schema: { type: 'string' },
  },
} as const satisfies Record<string, HeaderSpec>;

export type HeaderName = keyof typeof HEADERS;

/** Headers that may come on any response of the API, whatever the route. */
export const COMMON_RESPONSE_HEADERS: HeaderName[] = ['X-Request-Id'];
/** Headers that may come on any success response (a run or circuit may turn out deprecated). */
export const SUCCESS_RESPONSE_HEADERS: HeaderName[] = ['Deprecation'];

/** What a rate-limited route answers: the draft's two fields and the three legacy ones. */
export const RATE_LIMIT_HEADERS: HeaderName[] = [
  'RateLimit-Policy',
  'RateLimit',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
];
