import type { Migration } from './migration';

/**
 * Step cache, replay and compare (docs/runs.md).
 * - `step_cache`: one row per cache key (src/runs/step-cache.ts). `status` 'pending' is a single-flight
 *   claim: the process that inserted it calls upstream while others wait; its `expires_at` is then the
 *   claim's lease (renewed while the call runs), so a dead claimant's row is taken over or swept.
 *   'done' rows hold the step's output until `expires_at` (its ttl_s). Failed steps leave no row.
 * - `circuit_run_requests`: per run, the request key of every durable step (llm, http, blob, circuit)
 *   that completed, by journal path (`{"<path>": "<sha-256>"}`), written before the run ends: what a
 *   recorded replay compares its own rendered requests with.
 * - `circuit_runs.replay_of` / `replay_mode`: the run this one replays and how; `cache_bypass`: the
 *   query sent `"cache": "bypass"` (cache reads skipped, results still stored).
 */
export const stepCache: Migration = {
  name: '0020-step-cache',
  up: `
CREATE TABLE step_cache (
  key text PRIMARY KEY,
  status text NOT NULL CHECK (status IN ('pending', 'done')),
  owner text,
  output jsonb,
  usage jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX step_cache_expires_at_idx ON step_cache (expires_at);
CREATE TABLE circuit_run_requests (
  run_uid uuid PRIMARY KEY REFERENCES circuit_runs(uid) ON DELETE CASCADE,
  requests jsonb NOT NULL
);
ALTER TABLE circuit_runs ADD COLUMN replay_of uuid REFERENCES circuit_runs(uid) ON DELETE SET NULL;
ALTER TABLE circuit_runs ADD COLUMN replay_mode text CHECK (replay_mode IN ('recorded', 'live'));
ALTER TABLE circuit_runs ADD COLUMN cache_bypass boolean NOT NULL DEFAULT false;
`,
  down: `
ALTER TABLE circuit_runs DROP COLUMN cache_bypass;
ALTER TABLE circuit_runs DROP COLUMN replay_mode;
ALTER TABLE circuit_runs DROP COLUMN replay_of;
DROP TABLE circuit_run_requests;
DROP TABLE step_cache;
`,
};
