import { AppError } from '../errors';

/**
 * Password hashes at once, and hashes waiting. scrypt runs on libuv's thread pool (4 threads),
 * which file reads and DNS share: unbounded, sign-in attempts took every thread and a 256 KiB blob
 * download waited 13 s. One at a time leaves the other threads to file I/O; a full queue is refused.
 */
export interface HashingGate {
  run<T>(hash: () => Promise<T>): Promise<T>;
}

export function createHashingGate({ concurrency = 1, maxWaiting = 32 }: { concurrency?: number; maxWaiting?: number } = {}): HashingGate {
  let running = 0;
  const waiting: (() => void)[] = [];
  return {
    async run<T>(hash: () => Promise<T>): Promise<T> {
      if (running >= concurrency) {
        if (waiting.length >= maxWaiting) throw new AppError('RateLimited', 'Too many sign-ins are being checked; try again in a few seconds', { retryAfter: 5 });
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
      running++;
      try {
        return await hash();
      } finally {
        running--;
        waiting.shift()?.();
      }
    },
  };
}
