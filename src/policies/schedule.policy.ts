import type { User } from '../models';
import type { ScheduleRow } from '../domain/schedule-row';

/**
 * - `manage`: read, change or delete a schedule: only the user who created it (creating one needs
 *   the circuit's `manage`, i.e. its owner, checked by circuit.policy).
 */
export type ScheduleAction = 'manage';

export function schedulePermits(
  viewer: User | null,
  schedule: Pick<ScheduleRow, 'user_uid'>,
  action: ScheduleAction,
): boolean {
  switch (action) {
    case 'manage':
      return viewer !== null && viewer.uid === schedule.user_uid;
  }
}
