import { DEFAULT_SANDBOX_LIMITS, evaluateJsonata, SandboxError, type SandboxLimits } from '../sandbox/sandbox';

/**
 * Evaluates a JSONata expression over `scope` in the sandbox (STEP_CPU_MS, STEP_MEMORY_MB); the
 * result is plain JSON (sequences become arrays, nothing becomes null). Errors read "JSONata: …".
 */
export async function evaluateExpression(expression: string, scope: unknown, limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS): Promise<unknown> {
  const walked = walkPlainPath(expression, scope);
  if (walked) return walked.value;
  try {
    return await evaluateJsonata(expression, scope, limits);
  } catch (error) {
    if (error instanceof SandboxError && error.reason !== 'user') throw new Error(`JSONata: the expression ${error.message}`);
    throw new Error(`JSONata: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const PLAIN_PATH = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;
/** Words JSONata reads as operators or literals, not as field names. */
const JSONATA_WORDS = new Set(['and', 'or', 'in', 'true', 'false', 'null', 'function']);

/**
 * A bare field path (`steps.shout.output`, the usual `output`) through objects to a value that is not
 * an array means the same in JSONata as walking the properties, and is answered here without a
 * sandbox call. Anything else (arrays on the way or at the end, where JSONata's sequences map and
 * flatten; a missing field; any operator) goes to the sandbox.
 */
function walkPlainPath(expression: string, scope: unknown): { value: unknown } | undefined {
  if (expression.length > 256 || !PLAIN_PATH.test(expression)) return undefined;
  let node = scope;
  for (const key of expression.split('.')) {
    if (JSONATA_WORDS.has(key) || node === null || typeof node !== 'object' || Array.isArray(node) || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node === undefined || Array.isArray(node) ? undefined : { value: node };
}
