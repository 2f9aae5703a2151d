import jsonata from 'jsonata';

const cache = new Map<string, jsonata.Expression>();
const MAX_CACHED = 5_000;

/** Guardrails so a runaway expression fails its step instead of stalling a worker. */
export const EXPRESSION_LIMITS = { timeout: 1_000, stack: 500, sequence: 100_000 };

function compile(expression: string): jsonata.Expression {
  let compiled = cache.get(expression);
  if (!compiled) {
    compiled = jsonata(expression, EXPRESSION_LIMITS);
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(expression, compiled);
  }
  return compiled;
}

/** A JSON-safe copy: JSONata sequences become plain arrays, `undefined` becomes null. */
function toJson(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value) ?? 'null');
}

/** Evaluates a JSONata expression over `scope`; errors carry JSONata's message (and code). */
export async function evaluateExpression(expression: string, scope: unknown): Promise<unknown> {
  try {
    return toJson(await compile(expression).evaluate(scope));
  } catch (error) {
    const e = error as { message?: string; code?: string };
    const message = e.code === 'D1012' ? `expression took longer than ${EXPRESSION_LIMITS.timeout} ms` : e.message ?? String(error);
    throw new Error(`JSONata: ${message}`);
  }
}
