import { LRUCache } from 'lru-cache';
import type { Logger } from '../logger';
import { ApiToken, User } from '../models';
import { keepCacheCurrent, type NotifiedCache } from '../db/notified-cache';
import type { TokenGrant } from '../domain/token-grant';

/** What a valid token authenticates as, as read from the database. */
export interface CachedAuthentication {
  userRow: Record<string, unknown>;
  token: { uid: string; label: string | null; last_used_at: Date | null; created_at: Date };
  /** The token's limits (it never changes them after creation). */
  grant: TokenGrant;
}

/** Migration 0009: a committed change to a user's row or a token's revocation NOTIFYs the user's uid here. */
export const AUTH_CHANGED_CHANNEL = 'auth_changed';

/**
 * Per-process cache of token → user, so an authenticated read costs no token round trip. It is used
 * only while this process LISTENs to `auth_changed`; each notification drops that user's entries, so
 * a revoked token or a changed user is seen as soon as the commit is heard. A lookup that began before
 * an invalidation of its user is not stored (it may have read the old row). While the listener is
 * down nothing is cached. Unknown tokens are never cached.
 */
export class TokenCache implements NotifiedCache {
  private live = false;
  /** Bumped by every invalidation; a lookup remembers the value it started at. */
  private clock = 0;
  /** Invalidations older than the ones still remembered per user. */
  private forgottenBefore = 0;
  private readonly entries = new LRUCache<string, CachedAuthentication & { userUid: string }>({ max: 10_000 });
  private readonly reading = new Map<string, Promise<CachedAuthentication | null>>();
  private readonly invalidatedAt = new LRUCache<string, number>({
    max: 10_000,
    dispose: (tick) => {
      this.forgottenBefore = Math.max(this.forgottenBefore, tick);
    },
  });

  setLive(live: boolean): void {
    this.live = live;
    this.invalidateAll();
  }

  isLive(): boolean {
    return this.live;
  }

  get(tokenHash: string): CachedAuthentication | undefined {
    return this.live ? this.entries.get(tokenHash) : undefined;
  }

  /**
   * `read()` for `tokenHash`, shared with a read of it that began in this process since the last
   * invalidation and is still in progress: the requests of many clients that open with one token at once
   * (a cold start, a deploy) cost one read, not one each.
   */
  readOnce(tokenHash: string, read: () => Promise<CachedAuthentication | null>): Promise<CachedAuthentication | null> {
    const key = `${this.clock}:${tokenHash}`;
    let pending = this.reading.get(key);
    if (!pending) {
      pending = read().finally(() => this.reading.delete(key));
      this.reading.set(key, pending);
    }
    return pending;
  }

  /** The clock to hand back to `set` once the lookup that starts now has its row. */
  begin(): number {
    return this.clock;
  }

  set(tokenHash: string, userUid: string, value: CachedAuthentication, begunAt: number): void {
    if (!this.live) return;
    if ((this.invalidatedAt.get(userUid) ?? this.forgottenBefore) > begunAt) return;
    this.entries.set(tokenHash, { ...value, userUid });
  }

  invalidateUser(userUid: string): void {
    this.invalidatedAt.set(userUid, ++this.clock);
    for (const [hash, entry] of this.entries.entries()) if (entry.userUid === userUid) this.entries.delete(hash);
  }

  /** A user's uid drops that user's entries; a write of this process, or a payload naming nobody, all. */
  invalidate(userUid?: string): void {
    if (userUid) this.invalidateUser(userUid);
    else this.invalidateAll();
  }

  invalidateAll(): void {
    this.forgottenBefore = ++this.clock;
    this.entries.clear();
  }
}

/**
 * LISTENs to `auth_changed` and invalidates the app's token cache (ApiServices.tokenCache, src/graphql/context.ts), also when a revoke or user change
 * made through the models in this process commits; while the connection is down the cache is bypassed.
 * Returns the function that stops it.
 */
export function startTokenInvalidation(
  cache: TokenCache,
  databaseUrl: string,
  log: Logger,
): Promise<() => Promise<void>> {
  return keepCacheCurrent({
    databaseUrl,
    log,
    channel: AUTH_CHANGED_CHANNEL,
    applicationName: 'circuit-token-cache',
    cache,
    localWrites: [
      {
        models: [ApiToken, User],
        hooks: ['afterUpdate', 'afterDestroy', 'afterBulkUpdate', 'afterBulkDestroy', 'afterUpsert'],
      },
    ],
  });
}
