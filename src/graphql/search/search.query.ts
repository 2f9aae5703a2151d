import { QueryTypes, Sequelize } from 'sequelize';
import type { PageWindow } from '../common/pagination';
import { CircuitSearchResult, SearchType, UserSearchResult } from './search.type';

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

const CIRCUITS = `
  SELECT 'circuit' AS type, c.uid, c.name, c.description, u.username, NULL AS bio, c.name AS sort_name,
         ts_rank(c.search_vector, to_tsquery('simple', :tsq))
           + CASE WHEN lower(c.name) = :exact THEN ${EXACT_NAME_BOOST} ELSE 0 END AS rank
    FROM circuits c JOIN users u ON u.uid = c.owner_uid
   WHERE NOT c.is_private AND c.search_vector @@ to_tsquery('simple', :tsq)`;

const USERS = `
  SELECT 'user' AS type, u.uid, u.name, NULL AS description, u.username, u.bio, u.username AS sort_name,
         ts_rank(u.search_vector, to_tsquery('simple', :tsq))
           + CASE WHEN u.username = :exact OR lower(u.name) = :exact THEN ${EXACT_NAME_BOOST} ELSE 0 END AS rank
    FROM users u
   WHERE NOT u.is_private AND u.search_vector @@ to_tsquery('simple', :tsq)`;

/**
 * Public circuits and public user profiles matching `text`, best first, and how many match in all.
 * Private ones are neither returned nor counted.
 */
export async function searchPublic(
  sequelize: Sequelize,
  text: string,
  type: SearchType,
  window: PageWindow,
): Promise<{ items: (CircuitSearchResult | UserSearchResult)[]; totalCount: number }> {
  const tsq = toPrefixTsQuery(text);
  if (!tsq) return { items: [], totalCount: 0 };
  const parts = type === SearchType.circuits ? [CIRCUITS] : type === SearchType.users ? [USERS] : [CIRCUITS, USERS];
  const matches = parts.join('\n  UNION ALL\n');
  const replacements = { tsq, exact: text.trim().toLowerCase(), limit: window.limit, offset: window.offset };
  const rows = await sequelize.query<Row>(
    `SELECT m.type, m.uid, m.name, m.description, m.username, m.bio, count(*) OVER () AS total
       FROM (${matches}) m
      ORDER BY m.rank DESC, m.sort_name, m.uid
      LIMIT :limit OFFSET :offset`,
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
