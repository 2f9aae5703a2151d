import type { Sequelize } from 'sequelize';
import { preparedQuery } from '../../db/prepared';
import type { PageWindow } from '../common/pagination';
import { CircuitSearchResult, SEARCH_MATCH_BOUND, SearchType, UserSearchResult } from './search.type';
import type { SearchCache } from './search.cache';
import { listableCircuitsSql } from '../../policies/circuit.policy';
import { visibleProfilesSql } from '../../policies/user.policy';

const MAX_TERMS = 8;
const MAX_TERM_LENGTH = 64;

/**
 * The words of free text: the runs of letters and digits (the same split migration 0003 applies to
 * the indexed text), lower-cased, at most MAX_TERMS of MAX_TERM_LENGTH characters.
 */
function searchWords(text: string): string[] {
  return [
    ...new Set(
      text
        .toLowerCase()
        .split(/[^\p{L}\p{N}]+/u)
        .filter(Boolean),
    ),
  ]
    .slice(0, MAX_TERMS)
    .map((w) => w.slice(0, MAX_TERM_LENGTH));
}

/** Added to the rank of an exact name match, so that it comes first. */
const EXACT_NAME_BOOST = 10;

/** A prefix standing for at most this many words is expanded into them; a wider one stays a prefix. */
const MAX_EXPANSIONS = 16;

interface Row {
  type: 'circuit' | 'user' | null;
  uid: string | null;
  name: string;
  description: string | null;
  username: string;
  bio: string | null;
  total: string;
}

export { SEARCH_MATCH_BOUND };

// Search answers every caller alike (its pages are cached per process, not per viewer): it shows
// what the policies let anyone list, which needs no parameter.
const ANYONE_LISTS_CIRCUIT = listableCircuitsSql('c', null).sql;
const ANYONE_SEES_PROFILE = visibleProfilesSql('u', null).sql;
// search_postings (migration 0030) holds the rows these two let anyone see, as its triggers spell them today
// (`NOT is_private`, like the partial GIN indexes): a rule that narrows them must narrow those triggers too.

// q.q matches: each word a prefix, expanded into the words it stands for when they are few (search_lexemes,
// migration 0014), which GIN answers from posting lists instead of collecting a bitmap per prefix.
// q.rq ranks: the same words as prefixes, so ranking is as before the expansion.
// q.lex: the one known word a one-word query stands for (its expansion is exactly one word), else null.
// Parameters: $1 the query's words, $2 the whole query lower-cased (exact name), $3 limit, $4 offset,
// $5 SEARCH_MATCH_BOUND. Each kind first finds its exact name matches through the lower(name) index
// (a row or two). Then one of two paths, each gated by a one-time filter on q.lex:
// - GIN (q.lex null): at most $5 other matches per kind, taken from the GIN index before any ranking
//   (LIMIT inside, so the heap is read and ts_rank computed for those rows only), ranked with the exact
//   ones. Keeping the exact ones out of the GIN branch makes the two disjoint: UNION ALL, no
//   de-duplication, and no lower(name) per candidate.
// - postings (q.lex set, migration 0030): search_postings_ranked_idx yields the word's other matches of
//   both kinds already in ranking order (rank, then sort name in byte order, then uid), index only, so the
//   page is an OFFSET into them after the exact ones (which rank above any: +10), and the count an
//   index-only count up to $5. Nothing is sorted but the page's own rows.
// The display columns (and the owner's username) are joined for the page's rows alone.
interface Kind {
  /** search_postings.kind */
  kind: 'c' | 'u';
  /** The name of the CTE of the kind's exact name matches. */
  exactName: string;
  /** That CTE: the uids of the kind's exact name matches. */
  exact: string;
  /** Its candidates ranked in SQL: type, uid, sort_name, r (ts_rank, plus the boost for an exact name). */
  candidates: string;
}

const CIRCUITS: Kind = {
  kind: 'c',
  exactName: 'ce',
  exact: `ce AS MATERIALIZED (SELECT c.uid FROM circuits c, q WHERE ${ANYONE_LISTS_CIRCUIT} AND lower(c.name) = $2 AND c.search_vector @@ q.q)`,
  candidates: `
    (SELECT 'circuit' AS type, c.uid, c.name AS sort_name, ts_rank(c.search_vector, q.rq)::float8 AS r
       FROM circuits c, q WHERE (SELECT lex FROM q) IS NULL AND ${ANYONE_LISTS_CIRCUIT} AND c.search_vector @@ q.q AND c.uid NOT IN (SELECT uid FROM ce) LIMIT $5)
    UNION ALL
    (SELECT 'circuit', c.uid, c.name, ts_rank(c.search_vector, q.rq) + ${EXACT_NAME_BOOST}::float8 FROM circuits c, q WHERE c.uid IN (SELECT uid FROM ce))`,
};

const USERS: Kind = {
  kind: 'u',
  exactName: 'ue',
  exact: `ue AS MATERIALIZED (SELECT u.uid FROM users u, q WHERE ${ANYONE_SEES_PROFILE} AND (u.username = $2 OR lower(u.name) = $2) AND u.search_vector @@ q.q)`,
  candidates: `
    (SELECT 'user' AS type, u.uid, u.username AS sort_name, ts_rank(u.search_vector, q.rq)::float8 AS r
       FROM users u, q WHERE (SELECT lex FROM q) IS NULL AND ${ANYONE_SEES_PROFILE} AND u.search_vector @@ q.q AND u.uid NOT IN (SELECT uid FROM ue) LIMIT $5)
    UNION ALL
    (SELECT 'user', u.uid, u.username, ts_rank(u.search_vector, q.rq) + ${EXACT_NAME_BOOST}::float8 FROM users u, q WHERE u.uid IN (SELECT uid FROM ue))`,
};

/**
 * The statement for a search type; `oneWord`: with the postings path (a query of several words never takes
 * it, and leaving it out spares those searches its nodes' start-up, ~0.1 ms of PostgreSQL's CPU).
 */
function searchSql(type: SearchType, oneWord: boolean): string {
  const kinds = type === SearchType.circuits ? [CIRCUITS] : type === SearchType.users ? [USERS] : [CIRCUITS, USERS];
  // The word's postings of the kinds searched, but not the exact name matches, in ranking order (index only).
  const postings = (columns: string) => `SELECT ${columns} FROM search_postings p
     WHERE p.word = (SELECT lex FROM q)${kinds.length === 1 ? ` AND p.kind = '${kinds[0].kind}'` : ''}
       AND ${kinds.map((k) => `NOT (p.kind = '${k.kind}' AND p.uid IN (SELECT uid FROM ${k.exactName}))`).join(' AND ')}`;
  const pageSize = 'least($3::int, greatest($5::int - $4::int, 0))';
  const ranked = `SELECT m.type, m.uid, m.sort_name, m.r AS rank FROM m ORDER BY rank DESC, m.sort_name COLLATE "C", m.uid LIMIT ${pageSize} OFFSET $4`;
  const top = oneWord
    ? `SELECT x.type, x.uid, x.sort_name, x.rank FROM (
    (${ranked})
    UNION ALL
    (${postings(`CASE p.kind WHEN 'c' THEN 'circuit' ELSE 'user' END, p.uid, p.sort_name, p.rank::float8`)}
     ORDER BY p.rank DESC, p.sort_name COLLATE "C", p.uid LIMIT ${pageSize} OFFSET greatest($4::int - (SELECT count(*) FROM m), 0))
  ) x ORDER BY x.rank DESC, x.sort_name COLLATE "C", x.uid LIMIT ${pageSize}`
    : ranked;
  const total = oneWord
    ? `(SELECT count(*) FROM m) + (SELECT count(*) FROM (${postings('')} LIMIT $5) n)`
    : '(SELECT count(*) FROM m)';
  // One row per result of the page, each carrying the total; an empty page still yields one row
  // (uid null) with the total.
  return `
WITH q AS MATERIALIZED (
  SELECT to_tsquery('simple', string_agg(e.alt, ' & ')) AS q, to_tsquery('simple', string_agg('''' || t.word || ''':*', ' & ')) AS rq,
         CASE WHEN count(*) = 1 AND min(e.n) = 1 THEN min(e.one) END AS lex
    FROM unnest($1::text[]) AS t(word)
   CROSS JOIN LATERAL (
     SELECT CASE WHEN count(*) BETWEEN 1 AND ${MAX_EXPANSIONS} THEN '(' || string_agg('''' || l.word || '''', ' | ') || ')'
                 ELSE '''' || t.word || ''':*' END AS alt,
            count(*) AS n, min(l.word) AS one
       FROM (SELECT word FROM search_lexemes WHERE word >= t.word AND word < t.word || chr(1114111) LIMIT ${MAX_EXPANSIONS + 1}) l) e),
${kinds.map((k) => `${k.exact},`).join('\n')}
m AS ${oneWord ? 'MATERIALIZED ' : ''}(${kinds.map((k) => k.candidates).join('\n    UNION ALL\n')}),
top AS (
  ${top})
SELECT top.type, top.uid, coalesce(c.name, u.name) AS name, c.description, coalesce(owner.username, u.username) AS username,
       u.bio, t.total
  FROM (SELECT least(${total}, $5::int) AS total) t
  LEFT JOIN top ON true
  LEFT JOIN circuits c ON top.type = 'circuit' AND c.uid = top.uid
  LEFT JOIN users owner ON owner.uid = c.owner_uid
  LEFT JOIN users u ON top.type = 'user' AND u.uid = top.uid
 ORDER BY top.rank DESC, top.sort_name COLLATE "C", top.uid`;
}

/** The statement per search type, for any query (exported for EXPLAIN ANALYZE by hand and the search-sql bench). */
export const SEARCH_SQL: Record<SearchType, string> = {
  [SearchType.all]: searchSql(SearchType.all, true),
  [SearchType.circuits]: searchSql(SearchType.circuits, true),
  [SearchType.users]: searchSql(SearchType.users, true),
};

/** The statement per search type for a query of several words: without the postings path. */
export const SEARCH_WORDS_SQL: Record<SearchType, string> = {
  [SearchType.all]: searchSql(SearchType.all, false),
  [SearchType.circuits]: searchSql(SearchType.circuits, false),
  [SearchType.users]: searchSql(SearchType.users, false),
};

export interface SearchResults {
  items: (CircuitSearchResult | UserSearchResult)[];
  totalCount: number;
}

/**
 * Public circuits and public user profiles matching `text`, best first, and how many match in all.
 * Private ones are neither returned nor counted.
 */
export function searchPublic(
  { sequelize, searchCache }: { sequelize: Sequelize; searchCache?: SearchCache },
  text: string,
  type: SearchType,
  window: PageWindow,
): Promise<SearchResults> {
  const words = searchWords(text);
  if (!words.length) return Promise.resolve({ items: [], totalCount: 0 });
  const exact = text.trim().toLowerCase();
  const key = JSON.stringify([type, words, exact, window.limit, window.offset]);
  const compute = () => searchInSql(sequelize, words, exact, type, window);
  return searchCache ? (searchCache.get(key, compute) as Promise<SearchResults>) : compute();
}

function toItem(r: Omit<Row, 'total'>): CircuitSearchResult | UserSearchResult {
  return r.type === 'circuit'
    ? Object.assign(new CircuitSearchResult(), {
        type: 'circuit',
        uid: r.uid,
        name: r.name,
        description: r.description ?? '',
        username: r.username,
      })
    : Object.assign(new UserSearchResult(), {
        type: 'user',
        uid: r.uid,
        username: r.username,
        name: r.name,
        bio: r.bio ?? '',
      });
}

/** The page as the database computes it. */
async function searchInSql(
  sequelize: Sequelize,
  words: string[],
  exact: string,
  type: SearchType,
  window: PageWindow,
): Promise<SearchResults> {
  // A named statement: parsed and planned once per connection (planning this query cost more than running it).
  const rows = await preparedQuery<Row>(sequelize, (words.length === 1 ? SEARCH_SQL : SEARCH_WORDS_SQL)[type], [
    words,
    exact,
    window.limit,
    window.offset,
    SEARCH_MATCH_BOUND,
  ]);
  const totalCount = rows.length ? Number(rows[0].total) : 0;
  const items = rows.filter((r) => r.uid !== null).map(toItem);
  return { items, totalCount };
}
