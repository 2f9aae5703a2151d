import { AppError } from '../errors';

/**
 * Password hashes at once, and hashes waiting. scrypt runs on libuv's thread pool (4 threads), which
 * file reads and DNS share: unbounded, sign-in attempts took every thread and a 256 KiB blob download
 * waited 13 s. Two at a time leave the other threads to file I/O. Each client (key) may have one hash
 * running or waiting, so one client's burst never queues ahead of another's sign-in; a full queue is refused.
 */
export interface HashingGate {
  run<T>(key: string, hash: () => Promise<T>): Promise<T>;
}

const busy = (message: string) => new AppError('RateLimited', message, { retryAfter: 5 });

export function createHashingGate({
  concurrency = 2,
  maxWaiting = 32,
}: { concurrency?: number; maxWaiting?: number } = {}): HashingGate {
  let running = 0;
  const waiting: (() => void)[] = [];
  const keys = new Set<string>();
  return {
    async run<T>(key: string, hash: () => Promise<T>): Promise<T> {
      if (keys.has(key)) throw busy('A sign-in from this client is already being checked; try again in a few seconds');
      if (running >= concurrency && waiting.length >= maxWaiting)
        throw busy('Too many sign-ins are being checked; try again in a few seconds');
      keys.add(key);
      try {
        if (running >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
        running++;
        try {
          return await hash();
        } finally {
          running--;
          waiting.shift()?.();
        }
      } finally {
        keys.delete(key);
      }
    },
  };
}
