import type { CircuitMetric, User } from '../models';

/** A metric configuration is its owner's: only they may attach it to a circuit. */
export function metricPermits(viewer: User | null, metric: CircuitMetric, _action: 'attach'): boolean {
  return viewer !== null && viewer.uid === metric.user_uid;
}
