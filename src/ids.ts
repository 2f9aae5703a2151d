const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A malformed uid names nothing: callers answer it as not found. */
export function isUid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
