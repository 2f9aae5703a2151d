import { DEFAULT_SANDBOX_LIMITS, SandboxError, type SandboxCall, type SandboxLimits } from '../sandbox/sandbox';

/**
 * Evaluates a JSONata expression over `scope` in the sandbox (STEP_CPU_MS, STEP_MEMORY_MB); the
 * result is plain JSON (sequences become arrays, nothing becomes null). Errors read "JSONata: …".
 */
export async function evaluateExpression(expression: string, scope: unknown, call: SandboxCall): Promise<unknown> {
  const walked = walkPlainPath(expression, scope) ?? stringFunctionOfPath(expression, scope, call);
  if (walked) return walked.value;
  try {
    return await call.sandbox.evaluateJsonata(expression, scope, call);
  } catch (error) {
    if (error instanceof SandboxError && error.reason !== 'user')
      throw new Error(`JSONata: the expression ${error.message}`);
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
    if (
      JSONATA_WORDS.has(key) ||
      node === null ||
      typeof node !== 'object' ||
      Array.isArray(node) ||
      !Object.hasOwn(node, key)
    )
      return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node === undefined || Array.isArray(node) ? undefined : { value: node };
}

/**
 * JSONata's own string functions (jsonata 2.x `uppercase`, `lowercase`, `trim`), the same code, for a
 * string argument; linear in the string, so safe to run outside the sandbox.
 */
const STRING_FUNCTIONS: Record<string, (text: string) => string> = {
  uppercase: (text) => text.toUpperCase(),
  lowercase: (text) => text.toLowerCase(),
  trim: (text) => {
    let result = text.replace(/[ \t\n\r]+/gm, ' ');
    if (result.charAt(0) === ' ') result = result.substring(1);
    if (result.charAt(result.length - 1) === ' ') result = result.substring(0, result.length - 1);
    return result;
  },
};
const STRING_CALL = /^\$(uppercase|lowercase|trim)\(\s*([^()\s]+)\s*\)$/;

/**
 * One of those functions of a bare field path to a string (`$uppercase(steps.greet.output)`, as in the
 * walk-through) is answered here too: a sandbox call cost the worker ~0.3 ms of CPU per run. Anything
 * else, a result past the output bound included, goes to the sandbox, which answers or refuses as usual.
 */
function stringFunctionOfPath(
  expression: string,
  scope: unknown,
  limits: SandboxLimits,
): { value: unknown } | undefined {
  if (expression.length > 256) return undefined;
  const call = STRING_CALL.exec(expression);
  if (!call) return undefined;
  const argument = walkPlainPath(call[2], scope);
  if (typeof argument?.value !== 'string') return undefined;
  const value = STRING_FUNCTIONS[call[1]](argument.value);
  return JSON.stringify(value).length > (limits.maxOutputBytes ?? DEFAULT_SANDBOX_LIMITS.maxOutputBytes!)
    ? undefined
    : { value };
}
