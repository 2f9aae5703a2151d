import type { User } from '../models';
import type { CircuitRun } from '../models/CircuitRun';

/**
 * - `readDeliveries`: a run's webhook attempts (they name the receiver): only the user who started
 *   the run. Whether the run itself may be seen (404 otherwise) is run.policy's `read`.
 */
export type WebhookAction = 'readDeliveries';

export function webhookPermits(viewer: User | null, run: Pick<CircuitRun, 'user_uid'>, action: WebhookAction): boolean {
  switch (action) {
    case 'readDeliveries':
      return viewer !== null && viewer.uid === run.user_uid;
  }
}
