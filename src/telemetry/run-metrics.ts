import client, { type MetricObjectWithValues, type MetricValue } from 'prom-client';

/**
 * The run metrics of DESIGN §11.2, recorded where things happen (a run ends, a step ends, a webhook
 * attempt ends) in whichever thread does them. Each thread has its own registry (module state is per
 * thread); the API thread's /metrics sums its own and those of the run worker thread `npm start`
 * runs (it answers over its MessagePort: src/worker-thread.ts), see runMetricsText. A separate worker
 * process (`npm run worker`) serves no /metrics: its runs show on no API's /metrics (only the runs
 * the API itself ends, a cancel of a queued run say).
 */
export const runMetricsRegistry = new client.Registry();

export const runMetrics = {
  runs: new client.Counter({
    name: 'circuit_runs_total', help: 'Runs that ended, by terminal state', labelNames: ['state'], registers: [runMetricsRegistry],
  }),
  runDuration: new client.Histogram({
    name: 'circuit_run_duration_seconds', help: 'Time from a run being created to its end',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600], registers: [runMetricsRegistry],
  }),
  stepDuration: new client.Histogram({
    name: 'circuit_step_duration_seconds', help: 'Time a step took, by step kind (steps that completed or failed)', labelNames: ['kind'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120], registers: [runMetricsRegistry],
  }),
  inFlight: new client.Gauge({
    name: 'circuit_runs_in_flight', help: "Runs this service's run worker is executing now", registers: [runMetricsRegistry],
  }),
  webhookDeliveries: new client.Counter({
    name: 'circuit_webhook_deliveries_total', help: 'Webhook delivery attempts by outcome (delivered, failed: given up, retry: tried again later)',
    labelNames: ['outcome'], registers: [runMetricsRegistry],
  }),
  creditsCharged: new client.Counter({
    name: 'circuit_credits_charged_total', help: 'Credits charged for runs that ended', registers: [runMetricsRegistry],
  }),
};

/** Records a run's end: its state, how long since it was created, and its charge. */
export function recordRunEnded(state: string, createdAt: Date | string | null | undefined, credits: number | string | null | undefined): void {
  runMetrics.runs.inc({ state });
  if (createdAt) {
    const seconds = (Date.now() - new Date(createdAt).getTime()) / 1000;
    if (Number.isFinite(seconds) && seconds >= 0) runMetrics.runDuration.observe(seconds);
  }
  const amount = Number(credits ?? 0);
  if (Number.isFinite(amount) && amount > 0) runMetrics.creditsCharged.inc(amount);
}

/** Records a step that ended (completed or failed) from its ISO timestamps. */
export function recordStepEnded(kind: string, startedAt: string, endedAt: string): void {
  const seconds = (new Date(endedAt).getTime() - new Date(startedAt).getTime()) / 1000;
  if (Number.isFinite(seconds) && seconds >= 0) runMetrics.stepDuration.observe({ kind }, seconds);
}

export type RunMetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];

/** Other threads whose run metrics this thread's /metrics adds (the run worker thread of `npm start`). */
const sources = new Set<() => Promise<RunMetricsSnapshot | null>>();

export function addRunMetricsSource(source: () => Promise<RunMetricsSnapshot | null>): () => void {
  sources.add(source);
  return () => { sources.delete(source); };
}

export async function runMetricsSnapshot(): Promise<RunMetricsSnapshot> {
  return (await runMetricsRegistry.getMetricsAsJSON()) as RunMetricsSnapshot;
}

/** This thread's run metrics summed with those of its sources (a source that does not answer is left out). */
export async function runMetricsText(): Promise<string> {
  const snapshots = [await runMetricsSnapshot()];
  for (const snapshot of await Promise.all([...sources].map((source) => source().catch(() => null)))) if (snapshot) snapshots.push(snapshot);
  return client.AggregatorRegistry.aggregate(snapshots).metrics();
}
