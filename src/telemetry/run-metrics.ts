import { QueryTypes, type Sequelize } from 'sequelize';
import type { Logger } from '../logger';

/**
 * The run metrics (docs/telemetry.md), true whichever process ran the run: every thread that ends runs,
 * steps or webhook attempts (the API thread, the run worker thread of `npm start`, each `npm run
 * worker` process) adds its increments to totals in PostgreSQL (`run_metric_totals`, one upsert a
 * second at most), and the API's /metrics reads those totals. `circuit_runs_in_flight` is not counted
 * at all: it is the number of RUNNING runs, asked of PostgreSQL at scrape time. See docs/telemetry.md.
 */

const RUN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
const STEP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120];

interface MetricSpec {
  name: string;
  help: string;
  type: 'counter' | 'histogram' | 'gauge';
  buckets?: number[];
  labelName?: string;
}

const RUNS: MetricSpec = {
  name: 'circuit_runs_total',
  help: 'Runs that ended, by terminal state',
  type: 'counter',
  labelName: 'state',
};
const RUN_DURATION: MetricSpec = {
  name: 'circuit_run_duration_seconds',
  help: 'Time from a run being created to its end',
  type: 'histogram',
  buckets: RUN_BUCKETS,
};
const STEP_DURATION: MetricSpec = {
  name: 'circuit_step_duration_seconds',
  help: 'Time a step took, by step kind (steps that completed or failed)',
  type: 'histogram',
  buckets: STEP_BUCKETS,
  labelName: 'kind',
};
const IN_FLIGHT: MetricSpec = {
  name: 'circuit_runs_in_flight',
  help: 'Runs being executed now (RUNNING), by any worker',
  type: 'gauge',
};
const WEBHOOKS: MetricSpec = {
  name: 'circuit_webhook_deliveries_total',
  help: 'Webhook delivery attempts by outcome (delivered, failed: given up, retry: tried again later)',
  type: 'counter',
  labelName: 'outcome',
};
const CREDITS: MetricSpec = {
  name: 'circuit_credits_charged_total',
  help: 'Credits charged for runs that ended',
  type: 'counter',
};

/** In the order /metrics lists them. */
const METRICS = [RUNS, RUN_DURATION, STEP_DURATION, IN_FLIGHT, WEBHOOKS, CREDITS];

/** A label set as the exposition format writes it (`kind="llm"`), or '' without labels. */
function labelText(name: string | undefined, value: string | undefined): string {
  if (!name || value === undefined) return '';
  return `${name}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** One row of the totals: `part` is 'value' for a counter; for a histogram 'sum', 'count' or a bucket's upper bound (its own observations, not cumulative). */
interface Total {
  metric: string;
  labels: string;
  part: string;
  value: number;
}

/**
 * The increments one thread has recorded since its last flush (sums per metric, label set and part).
 * Bounded: the label values are run states, step kinds and webhook outcomes.
 */
export class RunMetricDeltas {
  private pending = new Map<string, Total>();

  add(metric: string, labels: string, part: string, value: number): void {
    const key = `${metric}\n${labels}\n${part}`;
    const total = this.pending.get(key);
    if (total) total.value += value;
    else this.pending.set(key, { metric, labels, part, value });
  }

  observe(spec: MetricSpec, labels: string, seconds: number): void {
    const bucket = spec.buckets!.find((le) => seconds <= le);
    this.add(spec.name, labels, bucket === undefined ? '+Inf' : String(bucket), 1);
    this.add(spec.name, labels, 'sum', seconds);
    this.add(spec.name, labels, 'count', 1);
  }

  /** Everything recorded so far, and a fresh start. */
  take(): Total[] {
    const taken = [...this.pending.values()];
    this.pending = new Map();
    return taken;
  }

  /** Puts back what a failed flush took. */
  restore(totals: Total[]): void {
    for (const t of totals) this.add(t.metric, t.labels, t.part, t.value);
  }
}

export interface RunMetricsStoreOptions {
  sequelize: Sequelize;
  log: Logger;
  /** The increments this store flushes; its own when absent. */
  deltas?: RunMetricDeltas;
  /** How often the increments are added to the totals. */
  flushEveryMs?: number;
  /** How long a scrape's answer is reused. */
  cacheMs?: number;
}

const FLUSH_EVERY_MS = 1_000;
const CACHE_MS = 1_000;

/**
 * One per thread that records (built by the composition, src/runtime.ts): adds the thread's
 * increments to `run_metric_totals` every second (one statement, rows in a fixed order so that
 * concurrent flushes of several processes never deadlock), and answers /metrics from the totals.
 * A flush that fails keeps its increments for the next; a process that dies loses at most its last
 * second.
 */
export class RunMetricsStore {
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | undefined;
  private cached: { at: number; text: Promise<string> } | undefined;
  private warned = false;
  private readonly deltas: RunMetricDeltas;

  constructor(private readonly options: RunMetricsStoreOptions) {
    this.deltas = options.deltas ?? new RunMetricDeltas();
    this.timer = setInterval(() => {
      void this.flush();
    }, options.flushEveryMs ?? FLUSH_EVERY_MS);
    this.timer.unref();
  }

  /** Records a run's end: its state, how long since it was created, and its charge. */
  runEnded(
    state: string,
    createdAt: Date | string | null | undefined,
    credits: number | string | null | undefined,
  ): void {
    this.deltas.add(RUNS.name, labelText('state', state), 'value', 1);
    if (createdAt) {
      const seconds = (Date.now() - new Date(createdAt).getTime()) / 1000;
      if (Number.isFinite(seconds) && seconds >= 0) this.deltas.observe(RUN_DURATION, '', seconds);
    }
    const amount = Number(credits ?? 0);
    if (Number.isFinite(amount) && amount > 0) this.deltas.add(CREDITS.name, '', 'value', amount);
  }

  /** Records a step that ended (completed or failed) from its ISO timestamps. */
  stepEnded(kind: string, startedAt: string, endedAt: string): void {
    const seconds = (new Date(endedAt).getTime() - new Date(startedAt).getTime()) / 1000;
    if (Number.isFinite(seconds) && seconds >= 0) this.deltas.observe(STEP_DURATION, labelText('kind', kind), seconds);
  }

  /** Records a webhook delivery attempt: delivered, failed (given up) or retry. */
  webhookDelivery(outcome: 'delivered' | 'failed' | 'retry'): void {
    this.deltas.add(WEBHOOKS.name, labelText('outcome', outcome), 'value', 1);
  }

  /** Adds this store's increments to the totals (waits for a flush under way first). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    const totals = this.deltas.take();
    if (totals.length === 0) return;
    this.flushing = this.write(totals).finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
  }

  private async write(totals: Total[]): Promise<void> {
    totals.sort((a, b) =>
      a.metric < b.metric
        ? -1
        : a.metric > b.metric
          ? 1
          : a.labels < b.labels
            ? -1
            : a.labels > b.labels
              ? 1
              : a.part < b.part
                ? -1
                : a.part > b.part
                  ? 1
                  : 0,
    );
    try {
      await this.options.sequelize.query(
        `INSERT INTO run_metric_totals (metric, labels, part, value)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[])
         ON CONFLICT (metric, labels, part) DO UPDATE SET value = run_metric_totals.value + EXCLUDED.value`,
        {
          bind: [
            totals.map((t) => t.metric),
            totals.map((t) => t.labels),
            totals.map((t) => t.part),
            totals.map((t) => t.value),
          ],
        },
      );
      this.warned = false;
    } catch (error) {
      this.deltas.restore(totals);
      if (!this.warned)
        this.options.log.warn({ err: error }, 'could not add run metrics to their totals; kept for the next try');
      this.warned = true;
    }
  }

  /** The run metrics in the Prometheus text format, from the totals of every process (reused for a second). */
  text(): Promise<string> {
    const now = Date.now();
    if (!this.cached || now - this.cached.at >= (this.options.cacheMs ?? CACHE_MS)) {
      const text = this.read();
      this.cached = { at: now, text };
      text.catch(() => {
        if (this.cached?.text === text) this.cached = undefined;
      });
    }
    return this.cached.text;
  }

  private async read(): Promise<string> {
    await this.flush();
    const rows = await this.options.sequelize.query<Total>(
      `SELECT metric, labels, part, value FROM run_metric_totals
       UNION ALL
       SELECT '${IN_FLIGHT.name}', '', 'value', count(*)::float8 FROM circuit_runs WHERE state = 'RUNNING'`,
      { type: QueryTypes.SELECT },
    );
    return exposition(rows);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

const formatNumber = (value: number): string =>
  Number.isInteger(value) ? String(value) : String(+value.toPrecision(15));
const withLabels = (name: string, ...labels: string[]): string => {
  const text = labels.filter((l) => l !== '').join(',');
  return text ? `${name}{${text}}` : name;
};

/** The totals in the Prometheus text format; metrics without labels show 0 before anything happened. */
export function exposition(rows: Total[]): string {
  const lines: string[] = [];
  for (const spec of METRICS) {
    lines.push(`# HELP ${spec.name} ${spec.help}`, `# TYPE ${spec.name} ${spec.type}`);
    const mine = rows.filter((r) => r.metric === spec.name);
    const byLabels = new Map<string, Map<string, number>>();
    for (const row of mine) {
      const parts = byLabels.get(row.labels) ?? new Map<string, number>();
      parts.set(row.part, (parts.get(row.part) ?? 0) + Number(row.value));
      byLabels.set(row.labels, parts);
    }
    if (!spec.labelName && !byLabels.has('')) byLabels.set('', new Map());
    for (const [labels, parts] of [...byLabels].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (spec.type !== 'histogram') {
        lines.push(`${withLabels(spec.name, labels)} ${formatNumber(parts.get('value') ?? 0)}`);
        continue;
      }
      let cumulative = 0;
      for (const le of spec.buckets!) {
        cumulative += parts.get(String(le)) ?? 0;
        lines.push(`${withLabels(`${spec.name}_bucket`, `le="${le}"`, labels)} ${formatNumber(cumulative)}`);
      }
      cumulative += parts.get('+Inf') ?? 0;
      lines.push(`${withLabels(`${spec.name}_bucket`, 'le="+Inf"', labels)} ${formatNumber(cumulative)}`);
      lines.push(`${withLabels(`${spec.name}_sum`, labels)} ${formatNumber(parts.get('sum') ?? 0)}`);
      lines.push(`${withLabels(`${spec.name}_count`, labels)} ${formatNumber(parts.get('count') ?? 0)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
