import DataLoader from 'dataloader';
import { QueryTypes } from 'sequelize';
import { Board } from '../../models/boards';
import { listableCircuitsSql } from '../../policies/circuit.policy';
import type { AppContext } from '../context';

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
