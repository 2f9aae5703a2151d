/**
 * A copy of a JSON object without those of `fields` whose value is null: fields that are absent until
 * they have a value (a run's RUN_OPTIONAL_FIELDS, a REST route's `omitWhenNull`). Anything that is not a
 * plain object, or no fields, answers `value` itself. Shared by every layer (REST bridge, SSE, presenters).
 */
export function omitNulls<T>(value: T, fields: readonly string[] | undefined): T {
  if (!fields?.length || !value || typeof value !== 'object' || Array.isArray(value)) return value;
  const copy = { ...(value as Record<string, unknown>) };
  for (const field of fields) if (copy[field] === null) delete copy[field];
  return copy as T;
}
