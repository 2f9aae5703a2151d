import type { User } from '../models';
import type { Board } from '../models/boards';

/**
 * - `read`: the board object, its circuit list and ping; starring a board needs it too.
 * - `manage`: update, delete, add and remove circuits.
 */
export type BoardAction = 'read' | 'manage';

/** Public boards are read by anyone; private boards and every change belong to the owner. */
export function boardPermits(viewer: User | null, board: Board, action: BoardAction): boolean {
  if (viewer !== null && viewer.uid === board.owner_uid) return true;
  switch (action) {
    case 'read':
      return !board.is_private;
    case 'manage':
      return false;
  }
}
