import { CircuitMetric, User } from '../models';
import { badInput } from '../errors';
import { checkExpression } from '../engine/validate-definition';
import type { Sandbox } from '../sandbox/sandbox';

export interface CreateCircuitMetricInput {
  name: string;
  metrics: { name: string; expression: string }[];
}

export const MAX_METRICS = 50;
const METRIC_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** A metric configuration owned by `owner`: named JSONata expressions evaluated over a finished run. */
export async function createCircuitMetric(
  sandbox: Sandbox,
  owner: User,
  input: CreateCircuitMetricInput,
): Promise<CircuitMetric> {
  const name = input.name.trim();
  if (name === '' || name.length > 100) throw badInput('name must be 1-100 characters', { field: 'name' });
  if (input.metrics.length === 0) throw badInput('metrics must hold at least one metric', { field: 'metrics' });
  if (input.metrics.length > MAX_METRICS)
    throw badInput(`metrics may hold at most ${MAX_METRICS} metrics`, { field: 'metrics' });
  const seen = new Set<string>();
  for (const [i, metric] of input.metrics.entries()) {
    if (!METRIC_NAME.test(metric.name)) {
      throw badInput(`metrics[${i}].name must be 1-64 letters, digits or "_", not starting with a digit`, {
        field: 'metrics',
      });
    }
    if (seen.has(metric.name))
      throw badInput(`metrics[${i}]: duplicate metric name ${metric.name}`, { field: 'metrics' });
    seen.add(metric.name);
    await checkExpression(sandbox, metric.expression, `metrics[${i}].expression (${metric.name})`);
  }
  return CircuitMetric.create({
    user_uid: owner.uid,
    name,
    metrics: input.metrics.map((m) => ({ name: m.name, expression: m.expression })),
  });
}
