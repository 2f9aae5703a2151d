import { UniqueConstraintError } from 'sequelize';
import type { Circuit, User } from '../models';
import { Board, BoardCircuit, BoardStar } from '../models/boards';
import { conflict } from '../errors';
import { checkResourceName } from './names';

async function uniqueName<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof UniqueConstraintError) throw conflict(`You already have a board named ${name}`);
    throw error;
  }
}

export interface BoardFields {
  name?: string | null;
  description?: string | null;
  isPrivate?: boolean | null;
  isProtected?: boolean | null;
}

export async function createBoard(owner: User, input: BoardFields & { name: string }): Promise<Board> {
  checkResourceName(input.name);
  return uniqueName(input.name, () => Board.create({
    owner_uid: owner.uid,
    name: input.name,
    description: input.description ?? '',
    is_private: input.isPrivate ?? false,
    is_protected: input.isProtected ?? false,
  }));
}

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
  return uniqueName(input.name ?? board.name, () => board.update(changes));
}

/** Deletes the board; its memberships and stars go with it (ON DELETE CASCADE), its circuits stay. */
export async function deleteBoard(board: Board): Promise<void> {
  await board.destroy();
}

/** Idempotent: adding a circuit already in the board changes nothing. */
export async function addCircuitToBoard(board: Board, circuit: Circuit): Promise<void> {
  await BoardCircuit.bulkCreate([{ board_uid: board.uid, circuit_uid: circuit.uid }], { ignoreDuplicates: true });
}

/** Returns whether a membership was removed. */
export async function removeCircuitFromBoard(board: Board, circuitUid: string): Promise<boolean> {
  return (await BoardCircuit.destroy({ where: { board_uid: board.uid, circuit_uid: circuitUid } })) > 0;
}

/** Idempotent: starring twice keeps the first star. */
export async function starBoard(user: User, board: Board): Promise<BoardStar> {
  await BoardStar.bulkCreate([{ user_uid: user.uid, board_uid: board.uid }], { ignoreDuplicates: true });
  return (await BoardStar.findOne({ where: { user_uid: user.uid, board_uid: board.uid } }))!;
}

/** Idempotent: unstarring a board not starred changes nothing. */
export async function unstarBoard(user: User, board: Board): Promise<void> {
  await BoardStar.destroy({ where: { user_uid: user.uid, board_uid: board.uid } });
}
