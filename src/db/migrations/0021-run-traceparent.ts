import type { Migration } from './migration';

/**
 * Traces (docs/telemetry.md): `circuit_runs.traceparent` is the W3C trace context the run's span continues
 * — the caller's (a `traceparent` header on the query) or the API's query span's when traces are on;
 * null otherwise. The worker (another thread or process) reads it when it claims the run; webhook
 * deliveries send it on.
 */
export const runTraceparent: Migration = {
  name: '0021-run-traceparent',
  up: `ALTER TABLE circuit_runs ADD COLUMN traceparent text;`,
};
