/**
 * PostgreSQL's `ts_rank(tsvector, tsquery)` (default weights, normalization 0) for the one query
 * shape search uses, `'w1':* & 'w2':* & …`, so that search candidates can be ranked in-process with
 * exactly the float4 the SQL path computes (ties are ordered by those values, so close is not enough).
 *
 * A port of calc_rank, calc_rank_and, calc_rank_or and find_wordentry from PostgreSQL 18's
 * src/backend/utils/adt/tsrank.c. Portions Copyright (c) 1996-2025, PostgreSQL Global Development
 * Group, under the PostgreSQL License.
 *
 * C's `float` is a float4: `f()` rounds wherever C stores into a float or computes in float; what C
 * computes in double (the `1.0 - …` literals, exp, sqrt) is left a JS number.
 */

/**
 * A tsvector: its lexemes in PostgreSQL's order (byte order of their UTF-8, as its text output lists
 * them) and, packed in one array of small integers, where each lexeme's positions end, then the
 * positions (WordEntryPos: weight << 14 | position; weight 3 = A, 2 = B, 1 = C, 0 = D). Lexeme i has
 * packed[n + (i ? packed[i - 1] : 0)] up to packed[n + packed[i]], none when the vector holds no
 * positions for it. An index copies `packed` into one shared arena (packVector, tsRankPacked).
 */
export interface TsVector {
  /** Mutable so that an index can make its vectors share one string per lexeme. */
  readonly lexemes: string[];
  readonly packed: readonly number[];
}

// Bound once: a global lookup in the hot loops costs 30 times more inside jest's vm context.
const { abs, exp, fround: f, sqrt } = Math;

/** default_weights, indexed by WordEntryPos weight: D, C, B, A. */
const WEIGHTS = [0.1, 0.2, 0.4, 1.0].map(f);
const MAXENTRYPOS = 1 << 14;

const weight = (wep: number) => WEIGHTS[wep >> 14]!;
const position = (wep: number) => wep & (MAXENTRYPOS - 1);

const QUOTE = 39; // '
const BACKSLASH = 92;
const COLON = 58;
const COMMA = 44;
const SPACE = 32;

/** Parses a tsvector's text output (`'alpha':1A,5 'bridge':3B 'x'`), keeping the entry order. Handles quoted lexemes with doubled '' and \\ escapes. */
export function parseTsVector(text: string): TsVector {
  const lexemes: string[] = [];
  const ends: number[] = [];
  const positions: number[] = [];
  const fail = (at: number, why = 'not a tsvector'): never => { throw new Error(`${why} at offset ${at}: ${text.slice(at, at + 40)}`); };
  let i = 0;
  while (i < text.length) {
    if (text.charCodeAt(i) !== QUOTE) fail(i);
    let lexeme = '';
    let from = ++i;
    for (;;) {
      if (i >= text.length) fail(from - 1);
      const c = text.charCodeAt(i);
      if (c === BACKSLASH) {
        lexeme += text.slice(from, i);
        from = ++i;
        i++;
      } else if (c === QUOTE) {
        lexeme += text.slice(from, i);
        if (text.charCodeAt(i + 1) !== QUOTE) break;
        from = ++i;
        i++;
      } else i++;
    }
    i++;
    if (text.charCodeAt(i) === COLON) {
      do {
        const start = ++i;
        let value = 0;
        while (i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) value = value * 10 + text.charCodeAt(i++) - 48;
        if (i === start) fail(start);
        if (value >= MAXENTRYPOS) fail(start, 'tsvector position out of range');
        const letter = text.charCodeAt(i);
        const weightCode = letter >= 65 && letter <= 68 ? (i++, 68 - letter) : 0; // A..D → 3..0
        positions.push((weightCode << 14) | value);
      } while (text.charCodeAt(i) === COMMA);
    }
    lexemes.push(lexeme);
    ends.push(positions.length);
    if (i < text.length && text.charCodeAt(i++) !== SPACE) fail(i - 1);
  }
  return { lexemes, packed: [...ends, ...positions] };
}

/** word_distance(dist) for dist 1 to 100; farther pairs weigh 1e-30. */
const WORD_DISTANCE = Array.from({ length: 101 }, (_, dist) => f(1.0 / (1.005 + 0.05 * exp(dist / 1.5 - 2))));
// V8's exp differs from glibc's in the last bit for a few distances; the float4 rounding absorbs it
// (the test checks every distance).
const wordDistance = (dist: number) => (dist > 100 ? f(1e-30) : WORD_DISTANCE[dist]!);

/** POSNULL's one WordEntryPos: weight D, the last position. */
const POSNULL = MAXENTRYPOS - 1;

/**
 * find_wordentry for a prefix operand: the lexemes starting with it are consecutive in byte order
 * (code point order), from the first one not below it; `startsWith` on whole code points is a
 * byte-prefix test.
 */
export function firstAtOrAfter(lexemes: readonly string[], operand: string): number {
  let low = 0;
  let high = lexemes.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareCodePoints(lexemes[mid]!, operand) < 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * What ranking reads of one vector: `packed` from `base` holds the `n` lexemes' position ends and
 * then the positions (TsVector.packed from 0, or a vector's block in an index's arena). `known[i]`,
 * when not negative, is the one lexeme operand i matches (an inverted index knows it); otherwise the
 * vector's lexemes are searched. One object, filled per call: ranking runs for every candidate of
 * every search and allocates nothing.
 */
const view = {
  packed: [] as ArrayLike<number>,
  base: 0,
  n: 0,
  known: undefined as ArrayLike<number> | undefined,
  lexemes: undefined as readonly string[] | undefined,
};

/** The lexemes operand i matches are `first` to the returned end (exclusive), in the vector's order. */
let first = 0;
function matchRange(operand: string, i: number): number {
  const known = view.known ? view.known[i]! : -1;
  if (known >= 0) {
    first = known;
    return known + 1;
  }
  const lexemes = view.lexemes!;
  let e = (first = firstAtOrAfter(lexemes, operand));
  while (e < view.n && lexemes[e]!.startsWith(operand)) e++;
  return e;
}

/** calc_rank_or. Its dummy position for a lexeme without positions is 0, not POSNULL's, but it reads weights only. */
function rankOr(operands: readonly string[]): number {
  const { packed, base, n } = view;
  let res = 0;
  for (let i = 0; i < operands.length; i++) {
    const stop = matchRange(operands[i]!, i);
    for (let e = first; e < stop; e++) {
      const from = base + n + (e ? packed[base + e - 1]! : 0);
      const to = base + n + packed[base + e]!;
      let resj = 0;
      let wjm = -1;
      let jm = 0;
      for (let j = 0; j < (to - from || 1); j++) {
        const w = weight(from === to ? POSNULL : packed[from + j]!);
        resj = f(resj + f(w / ((j + 1) * (j + 1))));
        if (w > wjm) {
          wjm = w;
          jm = j;
        }
      }
      res = f(res + f(f(wjm + resj) - f(wjm / ((jm + 1) * (jm + 1)))) / 1.64493406685);
    }
  }
  return operands.length > 0 ? f(res / operands.length) : res;
}

// Per operand, the positions of the last lexeme it matched (calc_rank_and's pos[]); at most 8 words.
const lastFrom = new Int32Array(64);
const lastTo = new Int32Array(64);

/**
 * calc_rank_and: every pair of occurrences of two different operands. A prefix operand matching
 * several lexemes pairs each with the other operands' *last* matched lexeme only, as in C. A lexeme
 * without positions is POSNULL's one occurrence, marked by from = -1.
 */
function rankAnd(operands: readonly string[]): number {
  const { packed, base, n } = view;
  if (operands.length > lastFrom.length) throw new RangeError(`ts_rank here takes at most ${lastFrom.length} words`);
  let res = -1;
  for (let i = 0; i < operands.length; i++) {
    lastFrom[i] = -2; // no lexeme matched yet
    const stop = matchRange(operands[i]!, i);
    for (let e = first; e < stop; e++) {
      const start = base + n + (e ? packed[base + e - 1]! : 0);
      const end = base + n + packed[base + e]!;
      const from = start === end ? -1 : start;
      const to = start === end ? 0 : end;
      lastFrom[i] = from;
      lastTo[i] = to;
      for (let k = 0; k < i; k++) {
        const otherFrom = lastFrom[k]!;
        if (otherFrom === -2) continue;
        const eitherNull = from === -1 || otherFrom === -1;
        for (let l = from; l < to; l++) {
          const a = l < 0 ? POSNULL : packed[l]!;
          for (let p = otherFrom; p < lastTo[k]!; p++) {
            const b = p < 0 ? POSNULL : packed[p]!;
            let dist = abs(position(a) - position(b));
            if (dist || eitherNull) {
              if (!dist) dist = MAXENTRYPOS;
              const curw = f(sqrt(f(f(weight(a) * weight(b)) * wordDistance(dist))));
              res = f(res < 0 ? curw : 1.0 - (1.0 - res) * (1.0 - curw));
            }
          }
        }
      }
    }
  }
  return res;
}

function rank(packed: ArrayLike<number>, base: number, n: number, known: ArrayLike<number> | undefined, lexemes: readonly string[] | undefined, operands: readonly string[]): number {
  if (n === 0 || operands.length === 0) return 0;
  view.packed = packed;
  view.base = base;
  view.n = n;
  view.known = known;
  view.lexemes = lexemes;
  const res = operands.length < 2 ? rankOr(operands) : rankAnd(operands);
  view.packed = [];
  view.known = view.lexemes = undefined;
  return res < 0 ? f(1e-20) : res;
}

/** Code point order, which is the byte order of UTF-8 (JavaScript's `<` compares UTF-16 units, which differs above U+D7FF). */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Surrogates (U+D800–DFFF, the units of code points above U+FFFF) sort after U+E000–FFFF. */
function codePointRank(unit: number): number {
  return unit >= 0xe000 ? unit - 0x800 : unit >= 0xd800 ? unit + 0x2000 : unit;
}

/** SortAndUniqItems: the query's operands in tsCompareString order (bytes, shorter first), duplicates dropped. Once per query. */
export function rankOperands(words: readonly string[]): string[] {
  return [...words].sort(compareCodePoints).filter((word, i, sorted) => i === 0 || word !== sorted[i - 1]);
}

/**
 * ts_rank of the vector whose block starts at `offset` in an index's arena (see packVector), for
 * the operands of rankOperands(words). `known[i]`, when not negative, is the one lexeme of the
 * vector operand i matches; `lexemes` (the vector's) are needed only when one is negative.
 */
export function tsRankPacked(arena: ArrayLike<number>, offset: number, operands: readonly string[], known: ArrayLike<number>, lexemes: readonly string[] | undefined): number {
  return rank(arena, offset + 1, arena[offset]!, known, lexemes, operands);
}

/** A vector's block for an index's arena: its lexeme count, then TsVector.packed. */
export function packVector(vector: TsVector): number[] {
  return [vector.lexemes.length, ...vector.packed];
}

/** ts_rank(vector, 'w1':* & 'w2':* & ...) exactly as PostgreSQL 18 computes it (a float4, returned as the number that float4 holds). `words`: distinct non-empty strings. */
export function tsRankPrefixAnd(vector: TsVector, words: readonly string[]): number {
  return rank(vector.packed, 0, vector.lexemes.length, undefined, vector.lexemes, rankOperands(words));
}
