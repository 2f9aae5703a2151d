import crypto from 'node:crypto';
import { Board, BoardCircuit, BoardStar } from '../../src/models/boards';
import type { Circuit } from '../../src/models';
import type { TestUser } from './factories';

const unique = () => crypto.randomBytes(4).toString('hex');

export async function makeBoard(
  owner: TestUser,
  input: { name?: string; description?: string; isPrivate?: boolean; isProtected?: boolean } = {},
): Promise<Board> {
  return Board.create({
    owner_uid: owner.user.uid,
    name: input.name ?? `b${unique()}`,
    description: input.description ?? '',
    is_private: input.isPrivate ?? false,
    is_protected: input.isProtected ?? false,
  });
}

export async function addToBoard(board: Board, ...circuits: Circuit[]): Promise<void> {
  for (const circuit of circuits) await BoardCircuit.create({ board_uid: board.uid, circuit_uid: circuit.uid });
}

export async function starBoardAs(user: TestUser, board: Board): Promise<BoardStar> {
  return BoardStar.create({ user_uid: user.user.uid, board_uid: board.uid });
}
