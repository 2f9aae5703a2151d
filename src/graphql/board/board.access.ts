import { User } from '../../models';
import { Board } from '../../models/boards';
import { notFound } from '../../errors';
import { authorize } from '../../policies/authorize';
import { BoardAction, boardPermits } from '../../policies/board.policy';
import type { AppContext } from '../context';
import { isUid } from '../../ids';
import { boardLoaders } from './board.loaders';

/** The board a request names, or NotFound (malformed uids too); then the policy decides 401/403. */
export async function findBoardFor(ctx: AppContext, uid: string, action: BoardAction): Promise<Board> {
  const board = isUid(uid) ? await boardLoaders(ctx).board.load(uid) : null;
  if (!board) throw notFound('Board');
  authorize(
    ctx.viewer,
    boardPermits(ctx.viewer, board, action),
    action === 'manage' ? 'Only the board owner may do this' : 'This board is private',
  );
  return board;
}

export async function findBoardByName(username: string, name: string): Promise<Board | null> {
  const owner = await User.findOne({ where: { username } });
  return owner ? Board.findOne({ where: { owner_uid: owner.uid, name } }) : null;
}

export async function findBoardByNameFor(
  ctx: AppContext,
  username: string,
  name: string,
  action: BoardAction,
): Promise<Board> {
  const board = await findBoardByName(username, name);
  if (!board) throw notFound('Board');
  authorize(
    ctx.viewer,
    boardPermits(ctx.viewer, board, action),
    action === 'manage' ? 'Only the board owner may do this' : 'This board is private',
  );
  return board;
}
