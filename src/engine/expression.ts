import { DEFAULT_SANDBOX_LIMITS, evaluateJsonata, SandboxError, type SandboxLimits } from '../sandbox/sandbox';

/**
 * Evaluates a JSONata expression over `scope` in the sandbox (STEP_CPU_MS, STEP_MEMORY_MB); the
 * result is plain JSON (sequences become arrays, nothing becomes null). Errors read "JSONata: …".
 */
export async function evaluateExpression(expression: string, scope: unknown, limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS): Promise<unknown> {
  try {
    return await evaluateJsonata(expression, scope, limits);
  } catch (error) {
    if (error instanceof SandboxError && error.reason !== 'user') throw new Error(`JSONata: the expression ${error.message}`);
    throw new Error(`JSONata: ${error instanceof Error ? error.message : String(error)}`);
  }
}
