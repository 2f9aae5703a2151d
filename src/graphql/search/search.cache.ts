import { QueryTypes, Sequelize } from 'sequelize';

/**
 * Per-process cache of search pages, valid only for the search epoch it was computed under
 * (migration 0003: every committed change to searchable circuits or users advances the epoch).
 * Each search reads the epoch (one primary-key row) first, so a cached page never shows data older
 * than the last commit the request could see — a circuit made private disappears at once.
 * Concurrent identical misses share one query.
 */
export class SearchCache<T> {
  private epoch: string | null = null;
  private readonly entries = new Map<string, Promise<T>>();

  constructor(private readonly sequelize: Sequelize, private readonly maxEntries = 500) {}

  /** Reads the current epoch; start it early to overlap the round trip with other work. */
  readEpoch(): Promise<string> {
    const read = this.sequelize
      .query<{ epoch: string }>('SELECT epoch FROM search_epoch', { type: QueryTypes.SELECT })
      .then(([row]) => String(row.epoch));
    read.catch(() => { /* reported to whoever awaits it */ });
    return read;
  }

  async get(key: string, compute: () => Promise<T>, epochRead: Promise<string> = this.readEpoch()): Promise<T> {
    const epoch = await epochRead;
    if (epoch !== this.epoch) {
      this.entries.clear();
      this.epoch = epoch;
    }
    const cached = this.entries.get(key);
    if (cached) {
      // Most recently used last: the Map's first key is the one to evict.
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached;
    }
    const pending = compute();
    this.entries.set(key, pending);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    pending.catch(() => { if (this.entries.get(key) === pending) this.entries.delete(key); });
    return pending;
  }
}

const caches = new WeakMap<Sequelize, SearchCache<unknown>>();

/** The cache of one database connection pool (one per app instance). */
export function searchCacheFor<T>(sequelize: Sequelize): SearchCache<T> {
  let cache = caches.get(sequelize);
  if (!cache) caches.set(sequelize, (cache = new SearchCache<unknown>(sequelize)));
  return cache as SearchCache<T>;
}
