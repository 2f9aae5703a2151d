import { QueryTypes, type Sequelize } from 'sequelize';
import { listableCircuitsSql } from '../../policies/circuit.policy';
import { visibleProfilesSql } from '../../policies/user.policy';
import { estimatedBytes, type CorpusKind, type IndexedRow } from './search.corpus';
import { parseTsVector } from './ts-rank';

// The index holds what anyone may list, as the SQL path searches it (the same policies).
const ANYONE_LISTS_CIRCUIT = listableCircuitsSql('c', null).sql;
const ANYONE_SEES_PROFILE = visibleProfilesSql('u', null).sql;

const SELECT: Record<CorpusKind, string> = {
  circuits: `
    SELECT c.uid, c.name, lower(c.name) AS lower_name, c.description, o.username, c.search_vector::text AS vector
      FROM circuits c JOIN users o ON o.uid = c.owner_uid
     WHERE ${ANYONE_LISTS_CIRCUIT} AND c.search_vector IS NOT NULL`,
  users: `
    SELECT u.uid, u.username, u.name, lower(u.name) AS lower_name, u.bio, u.search_vector::text AS vector
      FROM users u WHERE ${ANYONE_SEES_PROFILE}`,
};

const ALIAS: Record<CorpusKind, string> = { circuits: 'c', users: 'u' };

interface Row {
  uid: string;
  name: string | null;
  lower_name: string | null;
  description?: string | null;
  username: string;
  bio?: string | null;
  vector: string;
}

function toIndexedRow(kind: CorpusKind, r: Row): IndexedRow {
  const row = kind === 'circuits'
    ? { uid: r.uid, sortName: r.name ?? '', exactNames: r.lower_name === null ? [] : [r.lower_name],
        display: { name: r.name ?? '', description: r.description ?? null, username: r.username, bio: null } }
    : { uid: r.uid, sortName: r.username, exactNames: r.lower_name === null ? [r.username] : [r.username, r.lower_name],
        display: { username: r.username, name: r.name ?? '', bio: r.bio ?? null, description: null } };
  return { row, vector: parseTsVector(r.vector) };
}

const PAGE_ROWS = 2_000;

/**
 * Every row of a kind the index may hold, read and parsed a page at a time (by uid) so that requests
 * keep being served meanwhile; or, as soon as they would take more than `maxBytes` (estimatedBytes),
 * `over` with no rows, so that a database too large to hold is not read whole. The pages are not one
 * snapshot: a row changed during the read is named by its notification, and the index re-reads it
 * after the load.
 */
export async function readAllRows(sequelize: Sequelize, kind: CorpusKind, maxBytes: number): Promise<{ rows: IndexedRow[]; bytes: number; over: boolean }> {
  const indexed: IndexedRow[] = [];
  let bytes = 0;
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const rows = await sequelize.query<Row>(`${SELECT[kind]} AND ${ALIAS[kind]}.uid > $1::uuid ORDER BY ${ALIAS[kind]}.uid LIMIT ${PAGE_ROWS}`, { type: QueryTypes.SELECT, bind: [after] });
    for (const row of rows) {
      const parsed = toIndexedRow(kind, row);
      bytes += estimatedBytes(parsed);
      if (bytes > maxBytes) return { rows: [], bytes, over: true };
      indexed.push(parsed);
    }
    if (rows.length < PAGE_ROWS) return { rows: indexed, bytes, over: false };
    after = rows[rows.length - 1].uid;
  }
}

/** Those of `uids` the index may hold now (the others are to be dropped from it). */
export async function readRows(sequelize: Sequelize, kind: CorpusKind, uids: string[]): Promise<IndexedRow[]> {
  const rows = await sequelize.query<Row>(`${SELECT[kind]} AND ${ALIAS[kind]}.uid = ANY($1::uuid[])`, { type: QueryTypes.SELECT, bind: [uids] });
  return rows.map((r) => toIndexedRow(kind, r));
}
