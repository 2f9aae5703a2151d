import type { User } from '../models';
import type { Board } from '../models/boards';

/**
 * - `read`: the board object, its circuit list and ping; starring a board needs it too.
 * - `manage`: update, delete, add and remove circuits.
 */
export type BoardAction = 'read' | 'manage';

/** Public boards are read by anyone; private boards and every change belong to the owner (spec §4.3). */
export function boardPermits(viewer: User | null, board: Board, action: BoardAction): boolean {
  if (viewer !== null && viewer.uid === board.owner_uid) return true;
  switch (action) {
    case 'read':
      return !board.is_private;
    case 'manage':
      return false;
  }
}

/**
 * circuitPermits(viewer, c, 'list') as SQL over a circuits alias: what a board's circuit list shows
 * and counts. Bind the returned replacements alongside your own.
 */
export function listableCircuitSql(alias: string, viewer: User | null): { sql: string; replacements: Record<string, unknown> } {
  if (viewer?.is_admin) return { sql: 'TRUE', replacements: {} };
  if (!viewer) return { sql: `NOT ${alias}.is_private`, replacements: {} };
  return { sql: `(NOT ${alias}.is_private OR ${alias}.owner_uid = :listViewerUid)`, replacements: { listViewerUid: viewer.uid } };
}
