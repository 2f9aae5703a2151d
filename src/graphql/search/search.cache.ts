import type { Logger } from '../../logger';
import { LRUCache } from 'lru-cache';
import { Circuit, User } from '../../models';
import { keepCacheCurrent, type NotifiedCache } from '../../db/notified-cache';

/** Migrations 0003 and 0026: every committed change to searchable circuits or users NOTIFYs this channel. */
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
export class SearchCache<T = unknown> implements NotifiedCache {
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
    pending.catch(() => {
      if (this.entries.peek(key) === pending) this.entries.delete(key);
    });
    return pending;
  }
}

/**
 * LISTENs to `search_changed` and clears the page cache on each notification, and when a write
 * through the Circuit or User model in this process commits; nothing is cached while the listener
 * reconnects. Returns the function that stops it.
 */
export function startSearchInvalidation(
  cache: SearchCache,
  databaseUrl: string,
  log: Logger,
): Promise<() => Promise<void>> {
  return keepCacheCurrent({
    databaseUrl,
    log,
    channel: SEARCH_CHANGED_CHANNEL,
    applicationName: 'circuit-search-cache',
    cache,
    localWrites: [
      {
        models: [Circuit, User],
        hooks: [
          'afterCreate',
          'afterUpdate',
          'afterDestroy',
          'afterUpsert',
          'afterBulkCreate',
          'afterBulkUpdate',
          'afterBulkDestroy',
        ],
      },
    ],
  });
}
