import type { User } from '../models';

/**
 * - `manage`: read a batch, list its runs, cancel it: only the user who submitted it (docs/batches-and-budgets.md;
 *   submitting one needs the circuit's `run`, checked by run.policy's startRunPermits).
 */
export type BatchAction = 'manage';

export function batchPermits(viewer: User | null, batch: { user_uid: string }, action: BatchAction): boolean {
  switch (action) {
    case 'manage':
      return viewer !== null && viewer.uid === batch.user_uid;
  }
}
