/**
 * How deep a step's output may nest. JSON.parse accepts any depth, but what follows it does not:
 * JSON.stringify, jsonb and the sandbox recurse, and an answer nested 20,000 deep would fail there as
 * an internal error. Far beyond any real document; checked before anything recurses into the output.
 */
export const MAX_OUTPUT_DEPTH = 512;

/** Whether `value` nests arrays/objects deeper than `limit`. Iterative, so its own depth is no danger. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current as Record<string, unknown>)) {
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
}
