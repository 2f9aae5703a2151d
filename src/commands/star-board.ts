import type { User } from '../models';
import { Board, BoardStar } from '../models/boards';

/** Idempotent: starring twice keeps the first star. */
export async function starBoard(user: User, board: Board): Promise<BoardStar> {
  await BoardStar.bulkCreate([{ user_uid: user.uid, board_uid: board.uid }], { ignoreDuplicates: true });
  return (await BoardStar.findOne({ where: { user_uid: user.uid, board_uid: board.uid } }))!;
}
