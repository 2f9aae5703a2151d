import DataLoader from 'dataloader';
import { QueryTypes } from 'sequelize';
import { User } from '../../models';
import { Board } from '../../models/boards';
import { notFound } from '../../errors';
import { authorize } from '../../policies/authorize';
import { BoardAction, boardPermits } from '../../policies/board.policy';
import { listableCircuitsSql } from '../../policies/circuit.policy';
import type { AppContext } from '../context';
import { isUid } from '../common/uid';

/** Per-request loaders of the board domain; the counts depend on the viewer, as the lists do. */
export interface BoardLoaders {
  board: DataLoader<string, Board | null>;
  circuitCount: DataLoader<string, number>;
  starCount: DataLoader<string, number>;
}

const perRequest = new WeakMap<AppContext, BoardLoaders>();

function countsBy(rows: { board_uid: string; n: string | number }[], keys: readonly string[]): number[] {
  const map = new Map(rows.map((r) => [r.board_uid, Number(r.n)]));
  return keys.map((k) => map.get(k) ?? 0);
}

export function boardLoaders(ctx: AppContext): BoardLoaders {
  let loaders = perRequest.get(ctx);
  if (loaders) return loaders;
  const sequelize = ctx.services.sequelize;
  loaders = {
    board: new DataLoader(async (uids) => {
      const rows = await Board.findAll({ where: { uid: [...uids] } });
      const map = new Map(rows.map((b) => [b.uid, b]));
      return uids.map((u) => map.get(u) ?? null);
    }),
    circuitCount: new DataLoader(async (uids) => {
      const listable = listableCircuitsSql('c', ctx.viewer);
      const rows = await sequelize.query<{ board_uid: string; n: string }>(
        `SELECT bc.board_uid, count(*) AS n FROM board_circuits bc JOIN circuits c ON c.uid = bc.circuit_uid
          WHERE bc.board_uid IN (:uids) AND ${listable.sql} GROUP BY bc.board_uid`,
        { type: QueryTypes.SELECT, replacements: { uids: [...uids], ...listable.replacements } },
      );
      return countsBy(rows, uids);
    }),
    starCount: new DataLoader(async (uids) => {
      const rows = await sequelize.query<{ board_uid: string; n: string }>(
        'SELECT board_uid, count(*) AS n FROM board_stars WHERE board_uid IN (:uids) GROUP BY board_uid',
        { type: QueryTypes.SELECT, replacements: { uids: [...uids] } },
      );
      return countsBy(rows, uids);
    }),
  };
  perRequest.set(ctx, loaders);
  return loaders;
}

/** The board a request names, or NotFound (malformed uids too); then the policy decides 401/403. */
export async function findBoardFor(ctx: AppContext, uid: string, action: BoardAction): Promise<Board> {
  const board = isUid(uid) ? await boardLoaders(ctx).board.load(uid) : null;
  if (!board) throw notFound('Board');
  authorize(ctx.viewer, boardPermits(ctx.viewer, board, action), action === 'manage' ? 'Only the board owner may do this' : 'This board is private');
  return board;
}

export async function findBoardByName(username: string, name: string): Promise<Board | null> {
  const owner = await User.findOne({ where: { username } });
  return owner ? Board.findOne({ where: { owner_uid: owner.uid, name } }) : null;
}

export async function findBoardByNameFor(ctx: AppContext, username: string, name: string, action: BoardAction): Promise<Board> {
  const board = await findBoardByName(username, name);
  if (!board) throw notFound('Board');
  authorize(ctx.viewer, boardPermits(ctx.viewer, board, action), action === 'manage' ? 'Only the board owner may do this' : 'This board is private');
  return board;
}
