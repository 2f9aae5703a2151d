/**
 * A copy of a JSON object without those of `fields` whose value is null: fields that are absent until
 * they have a value (a run's RUN_OPTIONAL_FIELDS, a REST route's `omitWhenNull`). Anything that is not a
 * plain object, or no fields, answers `value` itself. `list[].name` leaves `name` out of each item of `list`. Shared by every layer (REST bridge, SSE, presenters).
 */
export function omitNulls<T>(value: T, fields: readonly string[] | undefined): T {
  if (!fields?.length || !value || typeof value !== 'object' || Array.isArray(value)) return value;
  const copy = { ...(value as Record<string, unknown>) };
  for (const field of fields) {
    // `list[].name`: left out of each item of the array `list`.
    const at = field.indexOf('[].');
    if (at < 0) {
      if (copy[field] === null) delete copy[field];
      continue;
    }
    const list = copy[field.slice(0, at)];
    if (Array.isArray(list))
      copy[field.slice(0, at)] = list.map((item: unknown) => omitNulls(item, [field.slice(at + 3)]));
  }
  return copy as T;
}
