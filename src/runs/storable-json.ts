/**
 * PostgreSQL's jsonb cannot hold U+0000 or a lone UTF-16 surrogate. Step outputs
 * are checked before a run's end is written, so such a run ends EXCEPTION at once instead of failing
 * its write on every retry.
 */
const UNSTORABLE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The JSON path of the first string (value or key) jsonb cannot store, else null. Iterative: depth is not bounded by the stack. */
export function findUnstorableText(value: unknown, path = '$'): string | null {
  const stack: Array<[unknown, string]> = [[value, path]];
  while (stack.length > 0) {
    const [current, at] = stack.pop()!;
    if (typeof current === 'string') {
      if (UNSTORABLE.test(current)) return at;
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], `${at}[${i}]`]);
    } else if (current && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        if (UNSTORABLE.test(key)) return at;
        stack.push([item, `${at}.${key}`]);
      }
    }
  }
  return null;
}

/** The same value with every unstorable character replaced by U+FFFD (for event data, which informs and must not fail a run). */
export function toStorableText<T>(value: T): T {
  if (typeof value === 'string') return value.replace(UNSTORABLE_ALL, '\uFFFD') as T;
  if (Array.isArray(value)) return value.map((v: unknown) => toStorableText(v)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [toStorableText(k), toStorableText(v)])) as T;
  }
  return value;
}
