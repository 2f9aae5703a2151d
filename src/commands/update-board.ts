import type { Board } from '../models/boards';
import { checkResourceName } from './names';
import { BoardFields, withUniqueBoardName } from './board-fields';

/** Changes only the fields given (null counts as not given); renaming onto a taken name is a Conflict. */
export async function updateBoard(board: Board, input: BoardFields): Promise<Board> {
  const changes: Partial<Pick<Board, 'name' | 'description' | 'is_private' | 'is_protected'>> = {};
  if (input.name != null) {
    checkResourceName(input.name);
    changes.name = input.name;
  }
  if (input.description != null) changes.description = input.description;
  if (input.isPrivate != null) changes.is_private = input.isPrivate;
  if (input.isProtected != null) changes.is_protected = input.isProtected;
  if (Object.keys(changes).length === 0) return board;
  return withUniqueBoardName(input.name ?? board.name, () => board.update(changes));
}
