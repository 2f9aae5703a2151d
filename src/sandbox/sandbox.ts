import { IsolatePool, SandboxError } from './isolate-pool';
import { bootSource } from './boot-source';

export { SandboxError } from './isolate-pool';
export { TEMPLATE_HELPERS } from './boot-source';

/** STEP_CPU_MS and STEP_MEMORY_MB (docs/limits.md); `maxOutputBytes` bounds what one call may return. */
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

/** Where a piece of user logic runs (the composition's Sandbox) and within which limits. */
export interface SandboxCall extends SandboxLimits {
  sandbox: Sandbox;
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

function outputLimit(limits: SandboxLimits): number {
  return limits.maxOutputBytes ?? DEFAULT_SANDBOX_LIMITS.maxOutputBytes!;
}

/**
 * The isolates that run user logic (JSONata, Handlebars): one pool per memory ceiling, made on first
 * use. Built once by each composition (API, worker, each run thread, a CLI command) and closed at its stop.
 */
export class Sandbox {
  private readonly pools = new Map<number, IsolatePool>();

  private poolFor(memoryMb: number, ownerShare?: number): IsolatePool {
    let pool = this.pools.get(memoryMb);
    if (!pool) {
      // The boot program is read once per pool (one per memory ceiling), not kept in the module.
      pool = new IsolatePool(bootSource(), memoryMb, POOL_SIZE, ownerShare);
      this.pools.set(memoryMb, pool);
    }
    return pool;
  }

  /** Evaluates a JSONata expression over `scope`; the result is plain JSON. */
  async evaluateJsonata(
    expression: string,
    scope: unknown,
    limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS,
  ): Promise<unknown> {
    const json = await this.poolFor(limits.memoryMb, limits.ownerShare).call(
      '__evaluate',
      [expression, JSON.stringify(scope ?? null), outputLimit(limits)],
      limits.cpuMs,
      limits.owner,
    );
    return JSON.parse(json) as unknown;
  }

  /** Renders Handlebars templates over one scope (one call for all of them). */
  async renderTemplates(
    templates: string[],
    scope: unknown,
    limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS,
  ): Promise<string[]> {
    if (templates.length === 0) return [];
    const json = await this.poolFor(limits.memoryMb, limits.ownerShare).call(
      '__render',
      [JSON.stringify(templates), JSON.stringify(scope ?? null), outputLimit(limits)],
      limits.cpuMs,
      limits.owner,
    );
    return JSON.parse(json) as string[];
  }

  /** Parses templates and JSONata expressions; the first that fails, or null. */
  async checkSyntax(
    items: { kind: 'template' | 'jsonata'; text: string }[],
    limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS,
  ): Promise<SyntaxProblem | null> {
    if (items.length === 0) return null;
    try {
      const json = await this.poolFor(limits.memoryMb).call('__check', [JSON.stringify(items)], limits.cpuMs);
      return JSON.parse(json) as SyntaxProblem | null;
    } catch (error) {
      if (error instanceof SandboxError && error.reason !== 'user')
        return { index: -1, message: `checking the definition ${error.message}`, kind: 'syntax' };
      throw error;
    }
  }

  /** Disposes every isolate (at the composition's stop); a later call makes new ones. */
  async close(): Promise<void> {
    const all = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(all.map((pool) => pool.close()));
  }
}
