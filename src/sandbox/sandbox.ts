import { IsolatePool, SandboxError } from './isolate-pool';
import { bootSource } from './boot-source';

export { SandboxError } from './isolate-pool';
export { TEMPLATE_HELPERS } from './boot-source';

/** STEP_CPU_MS and STEP_MEMORY_MB (DESIGN §8); `maxOutputBytes` bounds what one call may return. */
export interface SandboxLimits {
  cpuMs: number;
  memoryMb: number;
  maxOutputBytes?: number;
  /** Whose work this is (the run's user): the pool serves owners in turn (docs/fairness.md). */
  owner?: string;
  /** The most isolates of the pool one owner holds at once (SANDBOX_USER_ISOLATES; read when the pool is made). */
  ownerShare?: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = { cpuMs: 1000, memoryMb: 64, maxOutputBytes: 4 * 1024 * 1024 };
/** Isolates per memory ceiling: a few hostile calls stalling to their limit leave the others serving. */
const POOL_SIZE = 4;

const pools = new Map<number, IsolatePool>();

function poolFor(memoryMb: number, ownerShare?: number): IsolatePool {
  let pool = pools.get(memoryMb);
  if (!pool) {
    // The boot program is read once per pool (one per memory ceiling), not kept in the module.
    pool = new IsolatePool(bootSource(), memoryMb, POOL_SIZE, ownerShare);
    pools.set(memoryMb, pool);
  }
  return pool;
}

function outputLimit(limits: SandboxLimits): number {
  return limits.maxOutputBytes ?? DEFAULT_SANDBOX_LIMITS.maxOutputBytes!;
}

/** Evaluates a JSONata expression over `scope` in the sandbox; the result is plain JSON. */
export async function evaluateJsonata(expression: string, scope: unknown, limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS): Promise<unknown> {
  const json = await poolFor(limits.memoryMb, limits.ownerShare).call('__evaluate', [expression, JSON.stringify(scope ?? null), outputLimit(limits)], limits.cpuMs, limits.owner);
  return JSON.parse(json) as unknown;
}

/** Renders Handlebars templates over one scope in the sandbox (one call for all of them). */
export async function renderTemplates(templates: string[], scope: unknown, limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS): Promise<string[]> {
  if (templates.length === 0) return [];
  const json = await poolFor(limits.memoryMb, limits.ownerShare).call('__render', [JSON.stringify(templates), JSON.stringify(scope ?? null), outputLimit(limits)], limits.cpuMs, limits.owner);
  return JSON.parse(json) as string[];
}

export interface SyntaxProblem {
  /** Which of the checked texts is at fault. */
  index: number;
  message: string;
  /** Character offset, for JSONata. */
  position?: number;
  /** `syntax`: does not parse; `unavailable`: uses a helper, partial or decorator templates do not have. */
  kind: 'syntax' | 'unavailable';
}

/** Parses templates and JSONata expressions in the sandbox; the first that fails, or null. */
export async function checkSyntax(items: { kind: 'template' | 'jsonata'; text: string }[], limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS): Promise<SyntaxProblem | null> {
  if (items.length === 0) return null;
  try {
    const json = await poolFor(limits.memoryMb).call('__check', [JSON.stringify(items)], limits.cpuMs);
    return JSON.parse(json) as SyntaxProblem | null;
  } catch (error) {
    if (error instanceof SandboxError && error.reason !== 'user') return { index: -1, message: `checking the definition ${error.message}`, kind: 'syntax' };
    throw error;
  }
}

/** Disposes every isolate (at shutdown). */
export async function closeSandboxes(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((pool) => pool.close()));
}
