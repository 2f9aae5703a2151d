import type { Board } from '../../models/boards';
import type { AppContext } from '../context';
import { boardLoaders } from './board.loaders';
import { BoardType } from './board.type';

/** Builds the API view of a board, loading its owner and counts in batches. */
export async function presentBoard(ctx: AppContext, board: Board): Promise<BoardType> {
  const loaders = boardLoaders(ctx);
  const [owner, circuitCount, starCount] = await Promise.all([
    ctx.loaders.user.load(board.owner_uid),
    loaders.circuitCount.load(board.uid),
    loaders.starCount.load(board.uid),
  ]);
  return BoardType.from(board, owner?.username ?? '', circuitCount, starCount);
}
