import type { Sequelize } from 'sequelize';
import { preparedQuery } from '../db/prepared';
import type { GatedStep, RequestGate, StepResult } from '../engine/steps/types';
import { cacheKey, cacheSetting, cachedCall, requestKey, type StepCacheIo } from './step-cache';
import { RECORD_REQUESTS_SQL } from './transitions';

/**
 * A run's request gate (docs/runs.md, Step cache; Replay and compare): every step kind hands it its rendered request with the
 * call that makes it (engine/steps/types.ts throughGate). In this order:
 * 1. a recorded replay: a durable step (llm, http, blob, circuit) whose request hash equals the one the
 *    replayed run recorded at the same path reuses that run's output (0 credits, `replayed`);
 * 2. the step cache, for steps with a `cache` field (src/runs/step-cache.ts);
 * 3. the call.
 * It also collects the request hash of each durable step that completes, by path: written to
 * `circuit_run_requests` before the run ends (recordRunRequests), it is what a replay of this run compares.
 */

/** What a recorded replay reuses: the replayed run's request hashes and step outputs, by path. */
export interface ReplaySource {
  requests: Record<string, string>;
  outputs: Map<string, unknown>;
}

export class RunRequestGate implements RequestGate {
  /** This run's durable steps' request hashes, by path. */
  readonly requests: Record<string, string> = {};

  constructor(
    private readonly io: StepCacheIo,
    private readonly options: { bypassCache: boolean; replay?: ReplaySource | null },
  ) {}

  async through(at: GatedStep, request: unknown, call: () => Promise<StepResult>): Promise<StepResult> {
    const cache = cacheSetting(at.step);
    if (!at.durable && !cache) return call();
    const key = requestKey(at.step.kind, request);
    const replay = this.options.replay;
    let result: StepResult;
    if (at.durable && replay && replay.requests[at.path] === key && replay.outputs.has(at.path)) {
      result = { output: replay.outputs.get(at.path), credits: 0, reused: 'replayed' };
    } else if (cache) {
      result = await cachedCall(
        this.io,
        cacheKey(key, cache.scope, at.run),
        cache.ttlSeconds,
        this.options.bypassCache,
        at.signal,
        call,
      );
    } else {
      result = await call();
    }
    if (at.durable) this.requests[at.path] = key;
    return result;
  }
}

/** The outputs of a result_blob's steps by path, embedded runs' steps (`outer/inner`) included. */
function outputsOf(steps: unknown, prefix: string, into: Map<string, unknown>): void {
  if (!steps || typeof steps !== 'object') return;
  for (const [id, record] of Object.entries(steps as Record<string, { kind?: unknown; output?: unknown }>)) {
    if (!record || typeof record !== 'object') continue;
    into.set(`${prefix}${id}`, record.output);
    if (record.kind === 'circuit' && record.output && typeof record.output === 'object') {
      outputsOf((record.output as { steps?: unknown }).steps, `${prefix}${id}/`, into);
    }
  }
}

/**
 * What a recorded replay of run `uid` may reuse: its request hashes, and its steps' outputs from its
 * result_blob (a completed run) and its step journal (what an EXCEPTION run finished too).
 */
export async function loadReplaySource(sequelize: Sequelize, uid: string): Promise<ReplaySource> {
  const [row] = await preparedQuery<{
    requests: Record<string, string> | null;
    result_blob: { steps?: unknown } | null;
  }>(
    sequelize,
    'SELECT q.requests, r.result_blob FROM circuit_runs r LEFT JOIN circuit_run_requests q ON q.run_uid = r.uid WHERE r.uid = $1',
    [uid],
  );
  const outputs = new Map<string, unknown>();
  const journal = await preparedQuery<{ path: string; output: unknown }>(
    sequelize,
    "SELECT path, output FROM circuit_run_steps WHERE run_uid = $1 AND status = 'completed'",
    [uid],
  );
  for (const step of journal) outputs.set(step.path, step.output);
  outputsOf(row?.result_blob?.steps, '', outputs);
  return { requests: row?.requests ?? {}, outputs };
}

/**
 * Writes a run's request hashes on their own: for an attempt given back unfinished (a run that ends
 * writes them in the statement that ends it, finishRuns in src/runs/transitions.ts).
 */
export async function recordRunRequests(
  sequelize: Sequelize,
  runUid: string,
  requests: Record<string, string>,
): Promise<void> {
  if (Object.keys(requests).length === 0) return;
  await preparedQuery(sequelize, `WITH ended AS (SELECT $1::uuid AS uid) ${RECORD_REQUESTS_SQL('ended', '$2')}`, [
    runUid,
    JSON.stringify(requests),
  ]);
}
