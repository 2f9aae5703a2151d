import type { Migration } from './migration';

/**
 * Run metrics (docs/telemetry.md) whichever process ran the run: each process adds the increments it
 * recorded to these totals once a second (src/telemetry/run-metrics.ts) and the API's /metrics reads
 * them. A counter is one row (`part` 'value'); a histogram is a row per bucket (`part` its upper bound,
 * holding the observations that fell in it, not cumulative) plus 'sum' and 'count'. `labels` is the
 * label set as the Prometheus text format writes it (`kind="llm"`), '' for none. A few hundred rows at
 * most: the labels are run states, step kinds and webhook outcomes.
 */
export const runMetricTotals: Migration = {
  name: '0029-run-metric-totals',
  up: `
CREATE TABLE run_metric_totals (
  metric text NOT NULL,
  labels text NOT NULL,
  part text NOT NULL,
  value double precision NOT NULL,
  PRIMARY KEY (metric, labels, part)
);`,
};
