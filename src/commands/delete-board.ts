import type { Board } from '../models/boards';

/** Deletes the board; its memberships and stars go with it (ON DELETE CASCADE), its circuits stay. */
export async function deleteBoard(board: Board): Promise<void> {
  await board.destroy();
}
