import type { Model, ModelStatic, Transaction } from 'sequelize';
import type { Logger } from '../logger';
import { listen } from './listen';

/** A per-process cache kept current by one NOTIFY channel (search pages, token → user, ended runs). */
export interface NotifiedCache {
  /** Serve from the cache only while live: while the listener is down a change could go unheard. */
  setLive(live: boolean): void;
  /** A notification's payload ('' when it names nothing), or undefined for a committed write of this process. */
  invalidate(payload?: string): void;
}

export type WriteHook =
  | 'afterCreate'
  | 'afterUpdate'
  | 'afterDestroy'
  | 'afterUpsert'
  | 'afterBulkCreate'
  | 'afterBulkUpdate'
  | 'afterBulkDestroy';

export interface KeepCurrentOptions {
  databaseUrl: string;
  log: Logger;
  channel: string;
  /** The LISTEN connection's application_name (pg_stat_activity); also names the write hooks. */
  applicationName: string;
  cache: NotifiedCache;
  /**
   * Writes through these models in this process invalidate the cache as soon as they commit, so this
   * process's own next read never waits for the NOTIFY to come back.
   */
  localWrites?: { models: ModelStatic<Model>[]; hooks: readonly WriteHook[] }[];
}

/** The live caches of each kind, by applicationName: a process may run several app instances (tests). */
const liveCaches = new Map<string, Set<NotifiedCache>>();

/**
 * Named hooks, replaced on every start: initModels() of a later app instance in the same process
 * re-initialises the models and drops hooks added before it.
 */
function installWriteHooks(kind: string, writes: NonNullable<KeepCurrentOptions['localWrites']>): void {
  const onWrite = (...args: unknown[]) => {
    const transaction = args
      .map((arg) => (arg as { transaction?: Transaction | null } | undefined)?.transaction)
      .find(Boolean);
    const invalidateAll = () => {
      for (const cache of liveCaches.get(kind) ?? []) cache.invalidate();
    };
    if (transaction) transaction.afterCommit(invalidateAll);
    else invalidateAll();
  };
  for (const { models, hooks } of writes) {
    for (const model of models) {
      for (const hook of hooks) {
        (model.removeHook as (name: string, id: string) => void).call(model, hook, kind);
        (model.addHook as (name: string, id: string, fn: (...args: unknown[]) => void) => void).call(
          model,
          hook,
          kind,
          onWrite,
        );
      }
    }
  }
}

/**
 * LISTENs to the cache's channel on a dedicated connection (src/db/listen.ts reconnects) and
 * invalidates the cache on each notification; the cache is live only while listening. Returns the
 * function that stops it.
 */
export async function keepCacheCurrent(options: KeepCurrentOptions): Promise<() => Promise<void>> {
  const { cache, applicationName: kind } = options;
  if (options.localWrites) installWriteHooks(kind, options.localWrites);
  let live = liveCaches.get(kind);
  if (!live) liveCaches.set(kind, (live = new Set()));
  const caches = live;
  const goLive = (isLive: boolean) => {
    cache.setLive(isLive);
    if (isLive) caches.add(cache);
    else caches.delete(cache);
  };
  const listening = await listen({
    databaseUrl: options.databaseUrl,
    channel: options.channel,
    applicationName: kind,
    log: options.log,
    onNotification: (payload) => cache.invalidate(payload ?? ''),
    onListening: () => goLive(true),
    onLost: () => goLive(false),
  });
  return async () => {
    goLive(false);
    await listening.close();
  };
}
