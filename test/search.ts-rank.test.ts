import { Client } from 'pg';
import { parseTsVector, tsRankPrefixAnd, type TsVector } from '../src/graphql/search/ts-rank';

/** A vector's entries as lexeme and positions, read back from its packed form. */
function entriesOf(vector: TsVector): { lexeme: string; pos: number[] }[] {
  const n = vector.lexemes.length;
  return vector.lexemes.map((lexeme, i) => ({ lexeme, pos: vector.packed.slice(n + (i ? vector.packed[i - 1]! : 0), n + vector.packed[i]!) }));
}

describe('parseTsVector', () => {
  it('reads quoted lexemes with doubled quotes and backslash escapes, positions and weights', () => {
    const vector = parseTsVector(String.raw`'a''b':1A,3 'c\\d':2 'q''':7 'sp ace':5C,16383B 'x' '東京':4`);
    expect(entriesOf(vector).map((e) => [e.lexeme, e.pos])).toEqual([
      ["a'b", [(3 << 14) | 1, 3]],
      ['c\\d', [2]],
      ["q'", [7]],
      ['sp ace', [(1 << 14) | 5, (2 << 14) | 16383]],
      ['x', []],
      ['東京', [4]],
    ]);
  });

  it('reads the empty vector', () => {
    expect(entriesOf(parseTsVector(''))).toEqual([]);
  });

  it('rejects what is not a tsvector', () => {
    expect(() => parseTsVector("'a':1 b")).toThrow('not a tsvector');
    expect(() => parseTsVector("'a")).toThrow('not a tsvector');
    expect(() => parseTsVector("'a':16384")).toThrow('out of range');
  });
});

/** mulberry32: reproducible cases from a seed. */
function generator(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Words to_tsvector('simple') keeps whole, sharing prefixes and bytes (é, ß, 東京 and 東, ü).
const VOCABULARY = ['sun', 'sunset', 'sunny', 'summit', 'sum', 'summer', 'sunflower', 'star', 'start', 'stars', 'stark',
  'moon', 'moonlight', 'map', 'maple', 'a', 'ab', 'abc', 'abcd', 'été', 'ete', 'straße', 'strasse', 'ß', '東京', '東',
  'naïve', 'café', 'cafe', '2024', 'x1', 'über', 'ü'];
const ABSENT = ['zebra', 'quartz', 'sunsets', 'été2', '東京都', 'mapx', 'ßß'];
// Lexemes only a tsvector literal can hold: the parser drops emoji, splits on spaces, lower-cases.
// Emoji (UTF-16 surrogates) against U+E000 to U+FFFF ('ｓｕｎ', 'ﬁ'): JS string order is not byte order.
const LITERAL_LEXEMES = ['🎉', '🎉🎉', '😀', '😀x', '🌞', 'ｓｕｎ', 'ﬁ', 'ﬁx', "a'b", 'a', 'c\\d', 'c', '東京', '東', 'é', 'e',
  'ß', 'ss', 'sun', 'sunset', 'x y', 'Zebra'];

type Kind = 'abc' | 'stripped' | 'plain' | 'mixed' | 'literal';
/** `a` is the literal's text for kind 'literal'; `raw` queries are tsquery literals instead of to_tsquery's output. */
interface Case { kind: Kind; a: string; b: string; c: string; words: string[]; raw: boolean }

const quote = (lexeme: string) => `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
/** The query text search builds (quoting added for the literals' quotes and backslashes). */
const queryText = (words: readonly string[]) => words.map((w) => `${quote(w)}:*`).join(' & ');

function randomCases(random: () => number, count: number): Case[] {
  const int = (below: number) => Math.floor(random() * below);
  const pick = <T>(items: readonly T[]) => items[int(items.length)]!;
  const prefix = (word: string) => Array.from(word).slice(0, 1 + int(Array.from(word).length)).join('');
  const text = () => {
    const roll = random();
    // Mostly short; some past 256 occurrences of a word; a few past position 16383.
    const length = roll < 0.005 ? 16_000 + int(2_000) : roll < 0.05 ? 300 + int(3_000) : int(25);
    return Array.from({ length }, () => pick(VOCABULARY)).join(' ');
  };
  const words = (pool: readonly string[]) => {
    const size = pick([1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6, 7, 8]);
    const chosen = new Set<string>();
    while (chosen.size < size) {
      const roll = random();
      chosen.add(roll < 0.5 ? pick(pool) : roll < 0.85 ? prefix(pick(pool)) : pick(ABSENT));
    }
    return [...chosen];
  };
  const literal = () => LITERAL_LEXEMES.filter(() => random() < 0.5).map((lexeme) => {
    if (random() < 0.25) return quote(lexeme);
    const positions = Array.from({ length: 1 + int(random() < 0.1 ? 300 : 12) }, () => {
      // Near the last position too, where a lexeme without positions (POSNULL, 16383) is close.
      const at = random() < 0.5 ? 1 + int(200) : 16_283 + int(101);
      return `${at}${pick(['', 'A', 'B', 'C', 'D'])}`;
    });
    return `${quote(lexeme)}:${positions.join(',')}`;
  }).join(' ');

  const kinds: Kind[] = ['abc', 'abc', 'abc', 'abc', 'stripped', 'plain', 'mixed', 'literal', 'literal'];
  return Array.from({ length: count }, () => {
    const kind = pick(kinds);
    if (kind === 'literal') return { kind, a: literal(), b: '', c: '', words: words(LITERAL_LEXEMES), raw: true };
    return { kind, a: text(), b: text(), c: text(), words: words(VOCABULARY), raw: false };
  });
}

/** Every word_distance (1 to 100, then the constant), POSNULL near and at the last position, empty sides. */
function edgeCases(): Case[] {
  const literal = (a: string, words: string[]): Case => ({ kind: 'literal', a, b: '', c: '', words, raw: true });
  const cases: Case[] = [];
  for (let d = 1; d <= 101; d++) {
    for (const [x, y] of [['A', 'A'], ['B', 'C'], ['', 'A']]) cases.push(literal(`'a':1${x} 'b':${1 + d}${y}`, ['a', 'b']));
  }
  for (const b of ["'b'", "'b':16383", "'b':16382", "'b':16300A", "'b':1"]) cases.push(literal(`'a' ${b}`, ['a', 'b']));
  cases.push(literal("'a' 'b'", ['a']), literal("'a':3 'ab':4", ['a', 'ab']), literal("'a':3 'ab':4", ['ab', 'a', 'abc']));
  cases.push(literal('', ['a']), literal('', ['a', 'b']), literal("'a':1 'b':2", []));
  return cases;
}

interface Row { vector: string; query: string; rank: number }

async function rankInPostgres(client: Client, cases: readonly Case[]): Promise<Row[]> {
  const column = <T>(get: (c: Case) => T) => cases.map(get);
  const abc = `setweight(to_tsvector('simple', c.a), 'A') || setweight(to_tsvector('simple', c.b), 'B')
               || setweight(to_tsvector('simple', c.cc), 'C')`;
  const { rows } = await client.query<Row>(`
    SELECT x.v::text AS vector, x.q::text AS query, ts_rank(x.v, x.q)::float8 AS rank
      FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bool[])
           WITH ORDINALITY AS c(kind, a, b, cc, q, raw, i)
     CROSS JOIN LATERAL (SELECT
       CASE c.kind WHEN 'abc' THEN ${abc}
                   WHEN 'stripped' THEN strip(${abc})
                   WHEN 'plain' THEN to_tsvector('simple', c.a)
                   WHEN 'mixed' THEN strip(to_tsvector('simple', c.a)) || setweight(to_tsvector('simple', c.b), 'B')
                   ELSE c.a::tsvector END AS v,
       CASE WHEN c.raw THEN c.q::tsquery ELSE to_tsquery('simple', c.q) END AS q) x
     ORDER BY c.i`,
  [column((c) => c.kind), column((c) => c.a), column((c) => c.b), column((c) => c.c), column((c) => queryText(c.words)),
    column((c) => c.raw)]);
  return rows;
}

describe('tsRankPrefixAnd', () => {
  const seed = Number(process.env.TS_RANK_SEED ?? Math.floor(Math.random() * 2 ** 32));
  let client: Client;

  beforeAll(async () => {
    client = new Client({ connectionString: process.env.TEST_PG_ADMIN_URL });
    await client.connect();
  });
  afterAll(() => client.end());

  it("is bit-for-bit PostgreSQL's ts_rank on the edge cases and 4,000 random ones", async () => {
    const cases = [...edgeCases(), ...randomCases(generator(seed), 4_000)];
    const rows = await rankInPostgres(client, cases);
    expect(rows).toHaveLength(cases.length);

    const mismatches: unknown[] = [];
    const vectors: TsVector[] = [];
    rows.forEach((row, i) => {
      const { words } = cases[i]!;
      // The query PostgreSQL ranked is exactly the AND of these words as prefixes.
      expect(row.query).toBe(queryText(words));
      const vector = parseTsVector(row.vector);
      vectors.push(vector);
      const rank = tsRankPrefixAnd(vector, words);
      if (!Object.is(rank, row.rank)) mismatches.push({ vector: row.vector.slice(0, 300), words, postgres: row.rank, port: rank });
    });
    // TS_RANK_SEED=<seed> replays a failure.
    expect({ seed, mismatches: mismatches.slice(0, 5) }).toEqual({ seed, mismatches: [] });

    // The cases reach what they are meant to: many distinct ranks, full and capped position lists,
    // lexemes without positions, non-ASCII lexemes.
    const entries = vectors.flatMap(entriesOf);
    expect(new Set(rows.map((r) => r.rank)).size).toBeGreaterThan(1_000);
    expect(entries.some((e) => e.pos.length === 256)).toBe(true);
    expect(entries.some((e) => e.pos.some((p) => (p & 0x3fff) === 16383))).toBe(true);
    expect(entries.some((e) => e.pos.length === 0)).toBe(true);
    expect(entries.some((e) => Buffer.byteLength(e.lexeme) > e.lexeme.length)).toBe(true);
  });
});
