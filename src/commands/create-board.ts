import type { User } from '../models';
import { Board } from '../models/boards';
import { checkResourceName } from './names';
import { BoardFields, withUniqueBoardName } from './board-fields';

export async function createBoard(owner: User, input: BoardFields & { name: string }): Promise<Board> {
  checkResourceName(input.name);
  return withUniqueBoardName(input.name, () =>
    Board.create({
      owner_uid: owner.uid,
      name: input.name,
      description: input.description ?? '',
      is_private: input.isPrivate ?? false,
      is_protected: input.isProtected ?? false,
    }),
  );
}
