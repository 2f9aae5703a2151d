import { QueryTypes, Sequelize } from 'sequelize';
import type { PageWindow } from '../common/pagination';
import { CircuitSearchResult, SearchType, UserSearchResult } from './search.type';
import { searchCacheFor } from './search.cache';
import { listableCircuitsSql } from '../../policies/circuit.policy';
import { visibleProfilesSql } from '../../policies/user.policy';

const MAX_TERMS = 8;
const MAX_TERM_LENGTH = 64;
/** Added to ts_rank when the whole query equals a name, so that exact match comes first. */
const EXACT_NAME_BOOST = 10;

/**
 * Turns free text into a safe tsquery: words are the runs of letters and digits (the same split
 * migration 0003 applies to the indexed text), each matched as a prefix, all required.
 * Nothing of the input reaches to_tsquery but those words, so no input can be a tsquery syntax error.
 */
export function toPrefixTsQuery(text: string): string | null {
  const words = [...new Set(text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean))]
    .slice(0, MAX_TERMS)
    .map((w) => w.slice(0, MAX_TERM_LENGTH));
  return words.length ? words.map((w) => `'${w}':*`).join(' & ') : null;
}

interface Row {
  type: 'circuit' | 'user';
  uid: string;
  name: string;
  description: string | null;
  username: string;
  bio: string | null;
  total: string;
}

// Search answers every caller alike (its pages are cached per process, not per viewer): it shows
// what the policies let anyone list, which needs no parameter.
const ANYONE_LISTS_CIRCUIT = listableCircuitsSql('c', null).sql;
const ANYONE_SEES_PROFILE = visibleProfilesSql('u', null).sql;

// Ranking reads only the matching rows' vectors and names; the display columns (and the owner's
// username) are joined for the page's rows alone.
const CIRCUITS = `
    SELECT 'circuit' AS type, c.uid, c.name AS sort_name,
           ts_rank(c.search_vector, to_tsquery('simple', :tsq))
             + CASE WHEN lower(c.name) = :exact THEN ${EXACT_NAME_BOOST} ELSE 0 END AS rank
      FROM circuits c
     WHERE ${ANYONE_LISTS_CIRCUIT} AND c.search_vector @@ to_tsquery('simple', :tsq)`;

const USERS = `
    SELECT 'user' AS type, u.uid, u.username AS sort_name,
           ts_rank(u.search_vector, to_tsquery('simple', :tsq))
             + CASE WHEN u.username = :exact OR lower(u.name) = :exact THEN ${EXACT_NAME_BOOST} ELSE 0 END AS rank
      FROM users u
     WHERE ${ANYONE_SEES_PROFILE} AND u.search_vector @@ to_tsquery('simple', :tsq)`;

export interface SearchResults { items: (CircuitSearchResult | UserSearchResult)[]; totalCount: number }

/**
 * Public circuits and public user profiles matching `text`, best first, and how many match in all.
 * Private ones are neither returned nor counted.
 */
export function searchPublic(
  sequelize: Sequelize,
  text: string,
  type: SearchType,
  window: PageWindow,
): Promise<SearchResults> {
  const tsq = toPrefixTsQuery(text);
  if (!tsq) return Promise.resolve({ items: [], totalCount: 0 });
  const exact = text.trim().toLowerCase();
  const key = JSON.stringify([type, tsq, exact, window.limit, window.offset]);
  return searchCacheFor<SearchResults>(sequelize).get(key, () => runSearch(sequelize, tsq, exact, type, window));
}

async function runSearch(sequelize: Sequelize, tsq: string, exact: string, type: SearchType, window: PageWindow): Promise<SearchResults> {
  const parts = type === SearchType.circuits ? [CIRCUITS] : type === SearchType.users ? [USERS] : [CIRCUITS, USERS];
  const matches = parts.join('\n    UNION ALL\n');
  const replacements = { tsq, exact, limit: window.limit, offset: window.offset };
  const rows = await sequelize.query<Row>(
    `SELECT top.type, top.uid, coalesce(c.name, u.name) AS name, c.description, coalesce(owner.username, u.username) AS username,
            u.bio, top.total
       FROM (SELECT m.*, count(*) OVER () AS total FROM (${matches}) m
              ORDER BY m.rank DESC, m.sort_name, m.uid LIMIT :limit OFFSET :offset) top
       LEFT JOIN circuits c ON top.type = 'circuit' AND c.uid = top.uid
       LEFT JOIN users owner ON owner.uid = c.owner_uid
       LEFT JOIN users u ON top.type = 'user' AND u.uid = top.uid
      ORDER BY top.rank DESC, top.sort_name, top.uid`,
    { type: QueryTypes.SELECT, replacements },
  );
  let totalCount = rows.length ? Number(rows[0].total) : 0;
  if (!rows.length && window.offset > 0) {
    const [{ n }] = await sequelize.query<{ n: string }>(`SELECT count(*) AS n FROM (${matches}) m`, { type: QueryTypes.SELECT, replacements });
    totalCount = Number(n);
  }
  const items = rows.map((r) =>
    r.type === 'circuit'
      ? Object.assign(new CircuitSearchResult(), { type: 'circuit', uid: r.uid, name: r.name, description: r.description ?? '', username: r.username })
      : Object.assign(new UserSearchResult(), { type: 'user', uid: r.uid, username: r.username, name: r.name, bio: r.bio ?? '' }),
  );
  return { items, totalCount };
}
