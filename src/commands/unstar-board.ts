import type { User } from '../models';
import { Board, BoardStar } from '../models/boards';

/** Idempotent: unstarring a board not starred changes nothing. */
export async function unstarBoard(user: User, board: Board): Promise<void> {
  await BoardStar.destroy({ where: { user_uid: user.uid, board_uid: board.uid } });
}
