import crypto from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { preparedQuery } from '../db/prepared';
import type { CacheScope } from '../engine/steps/field-schemas';
import { CACHE_SCOPES, CACHE_TTL_LIMITS } from '../engine/steps/field-schemas';
import type { StepDefinition } from '../domain/definition';
import type { StepResult } from '../engine/steps/types';
import type { Logger } from '../logger';
import { toStorableText } from './storable-json';

/**
 * The step cache (docs/runs.md, Step cache), table `step_cache` (migration 0020).
 *
 * Keys. Each step kind renders its request (templates filled in) and hands it to the run's request
 * gate (src/runs/step-gate.ts) with the call that makes it: `requestKey` is the SHA-256 of the kind
 * and that request as canonical JSON (object keys sorted); `cacheKey` adds the scope: the caller's
 * user uid (scope "caller": one user's result is never served to another) or the circuit's uid
 * (scope "circuit": the circuit owner's opt-in to share results between callers).
 *
 * Single flight, also across worker processes, holding no database connection while it waits: the
 * first process to miss inserts a 'pending' row (its claim, with a lease it renews while the call runs);
 * the others poll the row (with back-off) until it is 'done' (a hit) or gone (the claimant failed: the
 * next claims it). Within one process, identical misses share one promise, so one process polls at most
 * once per key. A failed call deletes its claim: failed steps are never cached. A claimant that died
 * leaves a row whose lease runs out: the next miss takes it over, the run sweeper deletes it.
 */

/** A claim's lease; renewed every third of it while the call runs. */
export const CACHE_CLAIM_LEASE_MS = 30_000;
const POLL_FIRST_MS = 20;
const POLL_MAX_MS = 250;

export interface StepCacheSetting {
  ttlSeconds: number;
  scope: CacheScope;
}

/** The step's `cache` field, or null when it has none (validation has checked it at publish). */
export function cacheSetting(step: StepDefinition): StepCacheSetting | null {
  const cache = step.cache as { ttl_s?: unknown; scope?: unknown } | undefined | null;
  if (!cache || typeof cache !== 'object') return null;
  const ttl = Number(cache.ttl_s);
  if (!Number.isInteger(ttl) || ttl < CACHE_TTL_LIMITS.min || ttl > CACHE_TTL_LIMITS.max) return null;
  const scope = (CACHE_SCOPES as readonly unknown[]).includes(cache.scope) ? (cache.scope as CacheScope) : 'caller';
  return { ttlSeconds: ttl, scope };
}

/** JSON with object keys sorted at every level: equal values, equal text. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

const sha256 = (text: string): string => crypto.createHash('sha256').update(text).digest('hex');

/** The hash of a step's rendered request: what recorded replays compare, and the base of cache keys. */
export function requestKey(kind: string, request: unknown): string {
  return sha256(`${kind}\n${canonicalJson(request)}`);
}

/** The cache key of a request in a scope: the caller's user uid or the circuit's uid. */
export function cacheKey(request: string, scope: CacheScope, owner: { userUid: string; circuitUid: string }): string {
  return sha256(`${scope}\n${scope === 'caller' ? owner.userUid : owner.circuitUid}\n${request}`);
}

interface StoredResult {
  output: unknown;
}
interface CacheRow {
  status: 'pending' | 'done';
  output: unknown;
  live: boolean;
}

/** In this process: the outcome of the one lookup-or-call in flight per key (null: it failed). */

const hit = (stored: StoredResult): StepResult => ({ output: stored.output, credits: 0, reused: 'cached' });

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

const sleep = (ms: number, signal: AbortSignal) =>
  abortable(
    new Promise<void>((resolve) => {
      setTimeout(resolve, ms).unref();
    }),
    signal,
  );

const SELECT_ROW = 'SELECT status, output, expires_at > now() AS live FROM step_cache WHERE key = $1';
const CLAIM = `INSERT INTO step_cache (key, status, owner, expires_at) VALUES ($1, 'pending', $2, now() + make_interval(secs => $3::double precision))
  ON CONFLICT (key) DO UPDATE SET status = 'pending', owner = EXCLUDED.owner, output = NULL, usage = NULL, created_at = now(), expires_at = EXCLUDED.expires_at
  WHERE step_cache.expires_at <= now()
  RETURNING key`;
const RENEW = `UPDATE step_cache SET expires_at = now() + make_interval(secs => $3::double precision) WHERE key = $1 AND owner = $2 AND status = 'pending'`;
const RELEASE = `DELETE FROM step_cache WHERE key = $1 AND owner = $2 AND status = 'pending'`;
const FULFIL = `UPDATE step_cache SET status = 'done', owner = NULL, output = $3::jsonb, usage = $4::jsonb, created_at = now(), expires_at = now() + make_interval(secs => $5)
  WHERE key = $1 AND owner = $2`;
const STORE = `INSERT INTO step_cache (key, status, output, usage, expires_at) VALUES ($1, 'done', $2::jsonb, $3::jsonb, now() + make_interval(secs => $4))
  ON CONFLICT (key) DO UPDATE SET status = 'done', owner = NULL, output = EXCLUDED.output, usage = EXCLUDED.usage, created_at = now(), expires_at = EXCLUDED.expires_at`;

const usageJson = (result: StepResult) => (result.usage ? JSON.stringify(result.usage) : null);

/** This process's misses in flight, by key (one per process: RunService.cacheFlights). */
export type CacheFlights = Map<string, Promise<unknown>>;

export interface StepCacheIo {
  sequelize: Sequelize;
  log: Logger;
  flights: CacheFlights;
}

/** Across processes: a stored result, or this process's claim and call, or waiting for another's. */
async function lookUpOrCall(
  io: StepCacheIo,
  key: string,
  ttlSeconds: number,
  signal: AbortSignal,
  call: () => Promise<StepResult>,
): Promise<{ result: StepResult; stored: StoredResult }> {
  let delay = POLL_FIRST_MS;
  for (;;) {
    if (signal.aborted) throw signal.reason as Error;
    const [row] = await preparedQuery<CacheRow>(io.sequelize, SELECT_ROW, [key]);
    if (row?.status === 'done' && row.live) return { result: hit(row), stored: row };
    const owner = crypto.randomUUID();
    const claimed = await preparedQuery(io.sequelize, CLAIM, [key, owner, CACHE_CLAIM_LEASE_MS / 1000]);
    if (claimed.length === 0) {
      // Another process calls (or has just stored): wait for its row to be done or gone.
      await sleep(delay, signal);
      delay = Math.min(POLL_MAX_MS, delay * 2);
      continue;
    }
    const renew = setInterval(() => {
      preparedQuery(io.sequelize, RENEW, [key, owner, CACHE_CLAIM_LEASE_MS / 1000]).catch((error: unknown) =>
        io.log.warn({ err: error }, 'could not renew a step cache claim'),
      );
    }, CACHE_CLAIM_LEASE_MS / 3);
    renew.unref();
    let result: StepResult;
    try {
      result = await call();
    } catch (error) {
      clearInterval(renew);
      await preparedQuery(io.sequelize, RELEASE, [key, owner]).catch((failure: unknown) =>
        io.log.warn({ err: failure }, 'could not release a step cache claim'),
      );
      throw error;
    }
    clearInterval(renew);
    const output = toStorableText(result.output ?? null);
    try {
      await preparedQuery(io.sequelize, FULFIL, [key, owner, JSON.stringify(output), usageJson(result), ttlSeconds]);
    } catch (error) {
      io.log.warn({ err: error }, 'could not store a step result in the cache');
      await preparedQuery(io.sequelize, RELEASE, [key, owner]).catch(() => {});
    }
    return { result, stored: { output } };
  }
}

/**
 * A step's result through the cache: a stored, unexpired result for `key` (0 credits, `reused:
 * 'cached'`), else `call` made once however many identical misses are in flight (see above).
 * `bypass` (the query's `"cache": "bypass"`): no read, the call is made and its result stored.
 */
export async function cachedCall(
  io: StepCacheIo,
  key: string,
  ttlSeconds: number,
  bypass: boolean,
  signal: AbortSignal,
  call: () => Promise<StepResult>,
): Promise<StepResult> {
  if (bypass) {
    const result = await call();
    await preparedQuery(io.sequelize, STORE, [
      key,
      JSON.stringify(toStorableText(result.output ?? null)),
      usageJson(result),
      ttlSeconds,
    ]).catch((error: unknown) => io.log.warn({ err: error }, 'could not store a step result in the cache'));
    return result;
  }
  for (;;) {
    const shared = io.flights.get(key) as Promise<StoredResult | null> | undefined;
    if (shared) {
      const stored = await abortable(shared, signal);
      if (stored) return hit(stored);
      continue; // the one in flight failed (or its run stopped): try again
    }
    let settle!: (stored: StoredResult | null) => void;
    io.flights.set(
      key,
      new Promise((resolve) => {
        settle = resolve;
      }),
    );
    try {
      const { result, stored } = await lookUpOrCall(io, key, ttlSeconds, signal, call);
      settle(stored);
      return result;
    } catch (error) {
      settle(null);
      throw error;
    } finally {
      io.flights.delete(key);
    }
  }
}

/** The run sweeper's share: rows past their ttl, and claims whose lease ran out. */
export async function sweepStepCache(sequelize: Sequelize): Promise<void> {
  await sequelize.query('DELETE FROM step_cache WHERE expires_at < now()');
}
