import type { Sequelize, Transaction } from 'sequelize';
import type { Logger } from '../../logger';
import { LRUCache } from 'lru-cache';
import { Circuit, User } from '../../models';
import { listen } from '../../db/listen';

/** Migration 0003: every committed change to searchable circuits or users NOTIFYs this channel. */
export const SEARCH_CHANGED_CHANNEL = 'search_changed';

/**
 * Per-process cache of search pages. It is used only while this process LISTENs to
 * `search_changed` (startSearchInvalidation), and cleared on each notification — so a search costs no
 * extra round trip, and a circuit made private leaves the results as soon as the commit is heard.
 * While the listener is down nothing is cached (a change could go unheard).
 * A page being computed is in the cache from the moment its query is sent, so a change committed
 * after that clears it too: a page computed from a snapshot older than a heard change is never kept.
 * Concurrent identical misses share one query.
 */
export class SearchCache<T> {
  private live = false;
  private readonly entries: LRUCache<string, Promise<T>>;

  constructor(maxEntries = 500) {
    this.entries = new LRUCache({ max: maxEntries });
  }

  /** Whether cached pages may be served (a listener hears every change). */
  setLive(live: boolean): void {
    this.live = live;
    this.invalidate();
  }

  invalidate(): void {
    this.entries.clear();
  }

  get(key: string, compute: () => Promise<T>): Promise<T> {
    if (!this.live) return compute();
    const cached = this.entries.get(key);
    if (cached) return cached;
    const pending = compute();
    this.entries.set(key, pending);
    pending.catch(() => { if (this.entries.peek(key) === pending) this.entries.delete(key); });
    return pending;
  }
}

const caches = new WeakMap<Sequelize, SearchCache<unknown>>();
const liveCaches = new Set<SearchCache<unknown>>();

/** The cache of one database connection pool (one per app instance). */
export function searchCacheFor<T>(sequelize: Sequelize): SearchCache<T> {
  let cache = caches.get(sequelize);
  if (!cache) caches.set(sequelize, (cache = new SearchCache<unknown>()));
  return cache as SearchCache<T>;
}

let hooksInstalled = false;

/**
 * A write through the models in this process clears the caches as soon as it commits, without
 * waiting for the NOTIFY to come back (so this process's own next search never sees the old page).
 */
function installWriteHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  const onWrite = (...args: unknown[]) => {
    const transaction = args.map((arg) => (arg as { transaction?: Transaction | null } | undefined)?.transaction).find(Boolean);
    const clearAll = () => { for (const cache of liveCaches) cache.invalidate(); };
    if (transaction) transaction.afterCommit(clearAll);
    else clearAll();
  };
  const hooks = ['afterCreate', 'afterUpdate', 'afterDestroy', 'afterUpsert', 'afterBulkCreate', 'afterBulkUpdate', 'afterBulkDestroy'] as const;
  for (const model of [Circuit, User] as const) {
    for (const hook of hooks) (model.addHook as (name: string, fn: (...args: unknown[]) => void) => void)(hook, onWrite);
  }
}

/**
 * LISTENs to `search_changed` on a dedicated connection and clears this pool's search cache on each
 * notification; reconnects when the connection drops (the cache is bypassed meanwhile).
 * Returns the function that stops it.
 */
export async function startSearchInvalidation(sequelize: Sequelize, databaseUrl: string, log: Logger): Promise<() => Promise<void>> {
  installWriteHooks();
  const cache = searchCacheFor(sequelize);
  const goLive = (live: boolean) => {
    cache.setLive(live);
    if (live) liveCaches.add(cache);
    else liveCaches.delete(cache);
  };
  const listening = await listen({
    databaseUrl,
    channel: SEARCH_CHANGED_CHANNEL,
    applicationName: 'circuit-search-cache',
    log,
    onNotification: () => cache.invalidate(),
    onListening: () => goLive(true),
    // Searching uncached until it reconnects: a change could go unheard meanwhile.
    onLost: () => goLive(false),
  });
  return async () => {
    goLive(false);
    await listening.close();
  };
}
