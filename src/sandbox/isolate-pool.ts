import ivm from './isolated-vm';

export type SandboxEntry = '__evaluate' | '__render' | '__check';

/** Why user logic did not finish: it ran too long, used too much memory, or failed on its own terms. */
export class SandboxError extends Error {
  constructor(
    readonly reason: 'timeout' | 'memory' | 'user',
    message: string,
  ) {
    super(message);
    this.name = 'SandboxError';
  }
}

interface Slot {
  isolate: ivm.Isolate;
  entries: Record<SandboxEntry, ivm.Reference<(...args: unknown[]) => unknown>>;
}

/** Calls that name no owner (definition checks at publish, previews) share one queue. */
const NO_OWNER = '';

/**
 * A few V8 isolates, each with JSONata and Handlebars loaded, that run user logic on their own threads
 * under a heap ceiling (`memoryMb`) and a time limit per call. One call per isolate at a time (so the
 * time limit measures that call only); callers beyond the pool size wait their turn. An isolate that
 * hit a limit is disposed and replaced, so nothing a hostile call left behind survives it.
 *
 * Fair between owners (the users whose runs call; docs/fairness.md): waiting calls queue per owner
 * and a freed isolate goes to the owners in turn, and one owner holds at most `ownerShare` isolates at
 * once (half the pool by default: the rest, and the CPU they would take, stay with the others), so one user's hundreds of steps never stand between another user's
 * step and the pool: it waits for at most one call, usually none.
 */
export class IsolatePool {
  private readonly slots: (Promise<Slot> | undefined)[];
  private readonly idle: number[];
  /** Waiting calls per owner, and the owners with waiting calls in the order they are served. */
  private readonly waiting = new Map<string, Array<(index: number) => void>>();
  private readonly turns: string[] = [];
  private readonly held = new Map<string, number>();
  private readonly ownerShare: number;
  private closed = false;

  /** `source`: the program each isolate boots with (bootSource in ./boot-source.ts). */
  constructor(
    private readonly source: string,
    readonly memoryMb: number,
    size: number,
    ownerShare = Math.ceil(size / 2),
  ) {
    this.slots = new Array<Promise<Slot> | undefined>(size).fill(undefined);
    this.idle = [...this.slots.keys()];
    this.ownerShare = Math.max(1, Math.min(size, ownerShare));
  }

  private async boot(): Promise<Slot> {
    const isolate = new ivm.Isolate({ memoryLimit: this.memoryMb });
    try {
      const context = await isolate.createContext();
      const script = await isolate.compileScript(this.source, { filename: 'sandbox-boot.js' });
      await script.run(context, { timeout: 10_000 });
      script.release();
      const entry = (name: SandboxEntry) =>
        context.global.get(name, { reference: true }) as Promise<ivm.Reference<(...args: unknown[]) => unknown>>;
      const [evaluate, render, check] = await Promise.all([entry('__evaluate'), entry('__render'), entry('__check')]);
      return { isolate, entries: { __evaluate: evaluate, __render: render, __check: check } };
    } catch (error) {
      if (!isolate.isDisposed) isolate.dispose();
      throw error;
    }
  }

  private mayHold(owner: string): boolean {
    return owner === NO_OWNER || (this.held.get(owner) ?? 0) < this.ownerShare;
  }

  private grant(owner: string, index: number): number {
    this.held.set(owner, (this.held.get(owner) ?? 0) + 1);
    return index;
  }

  private acquire(owner: string): Promise<number> {
    if (!this.waiting.has(owner) && this.mayHold(owner)) {
      const index = this.idle.pop();
      if (index !== undefined) return Promise.resolve(this.grant(owner, index));
    }
    return new Promise((resolve) => {
      let queue = this.waiting.get(owner);
      if (!queue) {
        queue = [];
        this.waiting.set(owner, queue);
        this.turns.push(owner);
      }
      queue.push(resolve);
    });
  }

  private release(owner: string, index: number): void {
    const count = (this.held.get(owner) ?? 1) - 1;
    if (count > 0) this.held.set(owner, count);
    else this.held.delete(owner);
    this.idle.push(index);
    this.serve();
  }

  /** Hands idle isolates to waiting owners in turn, skipping those at their share. */
  private serve(): void {
    let looked = 0;
    while (this.idle.length > 0 && looked < this.turns.length) {
      const owner = this.turns.shift()!;
      const queue = this.waiting.get(owner)!;
      if (!this.mayHold(owner)) {
        this.turns.push(owner);
        looked++;
        continue;
      }
      looked = 0;
      const next = queue.shift()!;
      if (queue.length > 0) this.turns.push(owner);
      else this.waiting.delete(owner);
      next(this.grant(owner, this.idle.pop()!));
    }
  }

  private discard(index: number, slot: Slot): void {
    this.slots[index] = undefined;
    if (!slot.isolate.isDisposed) slot.isolate.dispose();
  }

  /** Calls an entry point with string/number arguments, in `owner`'s turn; resolves with its string result. */
  async call(
    entry: SandboxEntry,
    args: (string | number)[],
    timeoutMs: number,
    owner: string = NO_OWNER,
  ): Promise<string> {
    if (this.closed) throw new Error('the sandbox is closed');
    const index = await this.acquire(owner);
    let slot: Slot | undefined;
    try {
      let booting = this.slots[index];
      if (!booting) {
        booting = this.boot();
        this.slots[index] = booting;
        booting.catch(() => {
          if (this.slots[index] === booting) this.slots[index] = undefined;
        });
      }
      slot = await booting;
      if (slot.isolate.isDisposed) {
        this.slots[index] = undefined;
        slot = await (this.slots[index] = this.boot());
      }
      const result = await slot.entries[entry].apply(undefined, args, {
        timeout: timeoutMs,
        arguments: { copy: true },
        result: { copy: true, promise: true },
      });
      return String(result);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (slot && (slot.isolate.isDisposed || /disposed|memory limit/i.test(message))) {
        this.discard(index, slot);
        throw new SandboxError('memory', `used more than ${this.memoryMb} MB of memory`);
      }
      if (/Script execution timed out/i.test(message)) {
        if (slot) this.discard(index, slot);
        throw new SandboxError('timeout', `took longer than ${timeoutMs} ms`);
      }
      throw new SandboxError('user', message.replace(/^(Error|TypeError|RangeError|SyntaxError): /, ''));
    } finally {
      this.release(owner, index);
    }
  }

  /** Disposes every isolate; later calls fail. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = await Promise.allSettled(this.slots.filter((s): s is Promise<Slot> => s !== undefined));
    for (const s of slots) if (s.status === 'fulfilled' && !s.value.isolate.isDisposed) s.value.isolate.dispose();
    for (const index of this.slots.keys()) this.slots[index] = undefined;
  }
}
