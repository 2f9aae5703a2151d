import { LRUCache } from 'lru-cache';
import type { Logger } from '../logger';
import { Circuit, CircuitVersion, User } from '../models';
import { CircuitRun } from '../models/CircuitRun';
import { keepCacheCurrent, type NotifiedCache } from '../db/notified-cache';

/** Migration 0015: whatever could make a cached row of an ended run stale NOTIFYs this channel. */
export const RUN_READS_CHANGED_CHANNEL = 'run_reads_changed';

/** What a read of a run needs from the database: the run's row and its circuit's. */
export interface RunReadRows {
  run: Readonly<Record<string, unknown>>;
  circuit: Readonly<Record<string, unknown>> | null;
}

/** A circuit's row as starting a run reads it (through one of its adaptors). */
export type CircuitRow = Readonly<Record<string, unknown>>;

/** Only an ended run whose rows' JSON takes more than this (a large input or result) is kept; smaller ones are read each time. */
const ENTRY_MAX_BYTES = 128 * 1024;
/** Large ended runs held at once, and for how long after their last read (each up to a 4 MiB result plus its input). */
const LARGE_ENTRIES = 16;
const LARGE_ENTRY_TTL_MS = 5_000;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value) && !(value instanceof Date)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * Per-process shared copies of large ended runs as read (a memory bound, not a speed cache):
 * the readers that open a run whose rows' JSON is over ENTRY_MAX_BYTES together or in turn (followers
 * of a public run, pollers) share one read (readOnce), one parsed, frozen copy of its rows, and the
 * bytes of its answers (beside()), instead of each holding its own. Smaller ended runs are read from
 * the database each time (a cache of them did not move runs-polling by 20 %,
 * docs/performance-journal.md). A run never changes once it has ended, so its rows may be shared; only
 * ended runs are kept, only while this process LISTENs to `run_reads_changed`, and the whole cache is
 * dropped on each notification (a circuit changed or deleted, runs deleted). Who may read a run is
 * decided on every request by the run policy, from the run's row, as for a run read from the database.
 * A read that began before an invalidation is not kept (it may have read the old rows). Kept rows are
 * frozen: requests share them.
 *
 * Starting a run reads the circuit behind the adaptor it names: the same notifications (any change to
 * circuits) drop those rows too, so a circuit made private or deleted is refused as soon as this
 * process hears of it, and at once after a write of its own. The policy decides from the row each time.
 */
export class RunReadCache implements NotifiedCache {
  private live = false;
  /** Bumped by every invalidation; a read remembers the value it started at. */
  private generation = 0;
  private readonly circuitsByAdaptor = new LRUCache<string, CircuitRow>({ max: 2_000 });
  /**
   * Ended runs over ENTRY_MAX_BYTES (a result of megabytes), kept until a few seconds after their last
   * read: the readers that open one together or in turn (followers of a public run, pollers) share one
   * parsed copy, and the bytes of its answers (beside()), instead of each holding its own.
   */
  private readonly large = new LRUCache<string, RunReadRows>({
    max: LARGE_ENTRIES,
    ttl: LARGE_ENTRY_TTL_MS,
    updateAgeOnGet: true,
  });
  /** Reads in progress, so that readers arriving at once wait for one read. */
  private readonly reading = new Map<string, Promise<RunReadRows | null>>();
  private readonly readingCircuits = new Map<string, Promise<CircuitRow | null>>();
  /** What was made from kept rows alone (the bytes of an answer), per rows and key: it goes when the rows go. */
  private readonly besides = new WeakMap<RunReadRows, Map<string, unknown>>();

  setLive(live: boolean): void {
    this.live = live;
    this.invalidate();
  }

  invalidate(): void {
    this.generation++;
    this.large.clear();
    this.circuitsByAdaptor.clear();
  }

  get(uid: string): RunReadRows | undefined {
    return this.live ? this.large.get(uid) : undefined;
  }

  /**
   * `read()` for `uid`, shared with a read of it that began in this process since the last invalidation
   * (`begunAt`, from begin()) and is still in progress; a read from before an invalidation is not shared.
   */
  readOnce(uid: string, begunAt: number, read: () => Promise<RunReadRows | null>): Promise<RunReadRows | null> {
    const key = `${begunAt}:${uid}`;
    let pending = this.reading.get(key);
    if (!pending) {
      pending = read().finally(() => this.reading.delete(key));
      this.reading.set(key, pending);
    }
    return pending;
  }

  /** The generation to hand back to `set` once the read that starts now has its rows. */
  begin(): number {
    return this.generation;
  }

  /**
   * Keeps the rows of a large ended run (JSON over ENTRY_MAX_BYTES) read since `begunAt`; anything else
   * is ignored. True when kept (the rows are then frozen and shared); false leaves them as they were.
   */
  set(uid: string, rows: RunReadRows, begunAt: number): boolean {
    if (!this.live || begunAt !== this.generation) return false;
    if (JSON.stringify(rows).length <= ENTRY_MAX_BYTES) return false;
    this.large.set(uid, deepFreeze(rows));
    return true;
  }

  /**
   * `make()`'s value for `key` beside rows this cache kept (from get(), or handed to a set() that
   * kept them), made once and shared while the rows are: whatever follows from those rows alone,
   * such as the serialised answer of the run to one kind of viewer. An invalidation drops the rows,
   * and with them what is beside them; a request that still holds them sees what it saw before, as
   * with the rows themselves. The key must say everything else the value depends on.
   */
  beside<T>(rows: RunReadRows, key: string, make: () => T): T {
    let made = this.besides.get(rows);
    if (!made) this.besides.set(rows, (made = new Map()));
    if (!made.has(key)) made.set(key, make());
    return made.get(key) as T;
  }

  /**
   * `read(begunAt)` of the circuit behind `adaptorUid`, shared with one begun since the last invalidation
   * and still in progress: many first queries of one circuit at once cost one read.
   */
  readCircuitOfAdaptorOnce(
    adaptorUid: string,
    read: (begunAt: number) => Promise<CircuitRow | null>,
  ): Promise<CircuitRow | null> {
    const begunAt = this.generation;
    const key = `${begunAt}:${adaptorUid}`;
    let pending = this.readingCircuits.get(key);
    if (!pending) {
      pending = read(begunAt).finally(() => this.readingCircuits.delete(key));
      this.readingCircuits.set(key, pending);
    }
    return pending;
  }

  circuitOfAdaptor(adaptorUid: string): CircuitRow | undefined {
    return this.live ? this.circuitsByAdaptor.get(adaptorUid) : undefined;
  }

  /** Keeps the circuit row behind an adaptor, read since `begunAt` (adaptors never move to another circuit). */
  setCircuitOfAdaptor(adaptorUid: string, row: CircuitRow, begunAt: number): void {
    if (!this.live || begunAt !== this.generation) return;
    this.circuitsByAdaptor.set(adaptorUid, deepFreeze(row));
  }
}

/**
 * LISTENs to `run_reads_changed` and drops this pool's cache of ended runs on each notification, and
 * when a change to a circuit, or a deletion that can take runs with it, commits in this process.
 * Returns the function that stops it.
 */
export function startRunReadInvalidation(
  cache: RunReadCache,
  databaseUrl: string,
  log: Logger,
): Promise<() => Promise<void>> {
  return keepCacheCurrent({
    databaseUrl,
    log,
    channel: RUN_READS_CHANGED_CHANNEL,
    applicationName: 'circuit-run-read-cache',
    cache,
    localWrites: [
      {
        models: [Circuit],
        hooks: ['afterUpdate', 'afterBulkUpdate', 'afterUpsert', 'afterDestroy', 'afterBulkDestroy'],
      },
      { models: [CircuitRun, CircuitVersion, User], hooks: ['afterDestroy', 'afterBulkDestroy'] },
    ],
  });
}
