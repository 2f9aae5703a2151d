import ivm from 'isolated-vm';
import { bootSource } from './boot-source';

export type SandboxEntry = '__evaluate' | '__render' | '__check';

/** Why user logic did not finish: it ran too long, used too much memory, or failed on its own terms. */
export class SandboxError extends Error {
  constructor(readonly reason: 'timeout' | 'memory' | 'user', message: string) {
    super(message);
    this.name = 'SandboxError';
  }
}

interface Slot {
  isolate: ivm.Isolate;
  entries: Record<SandboxEntry, ivm.Reference<(...args: unknown[]) => unknown>>;
}

let source: string | undefined;

/**
 * A few V8 isolates, each with JSONata and Handlebars loaded, that run user logic on their own threads
 * under a heap ceiling (`memoryMb`) and a time limit per call. One call per isolate at a time (so the
 * time limit measures that call only); callers beyond the pool size wait their turn. An isolate that
 * hit a limit is disposed and replaced, so nothing a hostile call left behind survives it.
 */
export class IsolatePool {
  private readonly slots: (Promise<Slot> | undefined)[];
  private readonly idle: number[];
  private readonly waiting: ((index: number) => void)[] = [];
  private closed = false;

  constructor(readonly memoryMb: number, size: number) {
    this.slots = new Array<Promise<Slot> | undefined>(size).fill(undefined);
    this.idle = [...this.slots.keys()];
  }

  private async boot(): Promise<Slot> {
    source ??= bootSource();
    const isolate = new ivm.Isolate({ memoryLimit: this.memoryMb });
    try {
      const context = await isolate.createContext();
      const script = await isolate.compileScript(source, { filename: 'sandbox-boot.js' });
      await script.run(context, { timeout: 10_000 });
      script.release();
      const entry = (name: SandboxEntry) => context.global.get(name, { reference: true }) as Promise<ivm.Reference<(...args: unknown[]) => unknown>>;
      const [evaluate, render, check] = await Promise.all([entry('__evaluate'), entry('__render'), entry('__check')]);
      return { isolate, entries: { __evaluate: evaluate, __render: render, __check: check } };
    } catch (error) {
      if (!isolate.isDisposed) isolate.dispose();
      throw error;
    }
  }

  private acquire(): Promise<number> {
    const index = this.idle.pop();
    if (index !== undefined) return Promise.resolve(index);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(index: number): void {
    const next = this.waiting.shift();
    if (next) next(index);
    else this.idle.push(index);
  }

  private discard(index: number, slot: Slot): void {
    this.slots[index] = undefined;
    if (!slot.isolate.isDisposed) slot.isolate.dispose();
  }

  /** Calls an entry point with string/number arguments; resolves with its string result. */
  async call(entry: SandboxEntry, args: (string | number)[], timeoutMs: number): Promise<string> {
    if (this.closed) throw new Error('the sandbox is closed');
    const index = await this.acquire();
    let slot: Slot | undefined;
    try {
      let booting = this.slots[index];
      if (!booting) {
        booting = this.boot();
        this.slots[index] = booting;
        booting.catch(() => { if (this.slots[index] === booting) this.slots[index] = undefined; });
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
      this.release(index);
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
