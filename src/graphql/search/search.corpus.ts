import { compareCodePoints, firstAtOrAfter, packVector, rankOperands, tsRankPacked, type TsVector } from './ts-rank';

/** A row to index and its search_vector (ts-rank.ts parses PostgreSQL's text form). */
export interface IndexedRow {
  row: CorpusRow;
  vector: TsVector;
}

/** One searchable row as the index keeps it: what ordering and a result page need, nothing more. */
export interface CorpusRow {
  uid: string;
  /** The result's name ordering ties (a circuit's name, a user's username). */
  sortName: string;
  /** Lower-cased by PostgreSQL, so an exact-name match compares exactly as `lower(name) = $2` does. */
  exactNames: string[];
  /** The display fields of a result. */
  display: { name: string; username: string; description: string | null; bio: string | null };
}

export type CorpusKind = 'circuits' | 'users';

interface Posting {
  readonly lexeme: string;
  readonly ids: number[];
  readonly entries: number[];
}

export interface RankedRow {
  kind: CorpusKind;
  row: CorpusRow;
  rank: number;
}

/** A lookup of a word in one row's lexemes (a binary search) against a step through one posting. */
const CHECK_COST = 8;

/** Added to the rank of an exact name match, as the SQL path does (search.query.ts). */
export const EXACT_NAME_BOOST = 10;

/**
 * The searchable rows of one kind (circuits or users) with an inverted index: lexeme → the ids of
 * the rows holding it. Matching and ranking give what the SQL path gives for the same rows (proved
 * by test/search.index.test.ts): every query word a prefix of some lexeme of the row, ranked by
 * ts_rank (ported exactly, ts-rank.ts) plus EXACT_NAME_BOOST for an exact name.
 */
export class Corpus {
  private readonly rows: (CorpusRow | undefined)[] = [];
  /** Each row's lexemes (for its removal, and for ranking a word that matched several of them). */
  private readonly lexemesOf: (string[] | undefined)[] = [];
  /**
   * Each row's vector as a block of one array (packVector), so that ranking a candidate reads one
   * contiguous block instead of chasing objects across the heap (which cost more than the ranking).
   * Blocks of removed rows are garbage until a compaction.
   */
  private arena = new Int32Array(1 << 16);
  private arenaUsed = 0;
  private arenaGarbage = 0;
  private offsetOf = new Int32Array(1024);
  private bytesOf = new Int32Array(1024);
  private readonly freeIds: number[] = [];
  private readonly idOf = new Map<string, number>();
  /**
   * Per lexeme: the ids of the rows holding it, where it stands in each row's vector (so ranking need
   * not search the vector for it), and the lexeme's one string (rows' vectors share it).
   */
  private readonly postings = new Map<string, Posting>();
  /** Every posting, sorted by lexeme, so a prefix is a contiguous range found by binary search. */
  private readonly lexicon: Posting[] = [];
  /** Rows by exact name: one id, or the ids when several rows share it (the common case costs no Set). */
  private readonly exact = new Map<string, number | number[]>();
  /** Per-row stamps of a query in progress (see matching), grown with the rows. */
  private marks = new Uint32Array(1024);
  private stamp = 0;
  /** Per query operand, per row: the one lexeme of the row it matched, or -1 for several (see matching). */
  private readonly known: Int32Array[] = [];
  private heldBytes = 0;

  constructor(readonly kind: CorpusKind) {}

  get size(): number {
    return this.idOf.size;
  }

  /**
   * A corpus of these rows, built at once (one sort of the lexemes instead of an insertion each), a
   * slice at a time so that requests keep being served while it builds.
   */
  static async of(kind: CorpusKind, rows: IndexedRow[]): Promise<Corpus> {
    const corpus = new Corpus(kind);
    for (let i = 0; i < rows.length; i++) {
      corpus.insert(rows[i].row, rows[i].vector, false);
      if (i % 1_000 === 999) await yieldToRequests();
    }
    corpus.lexicon.push(...(await sortedInSlices([...corpus.postings.values()], (a, b) => (a.lexeme < b.lexeme ? -1 : a.lexeme > b.lexeme ? 1 : 0))));
    return corpus;
  }

  /** What the rows held take of memory, roughly (see estimatedBytes). */
  get bytes(): number {
    return this.heldBytes;
  }

  upsert({ row, vector }: IndexedRow): void {
    this.remove(row.uid);
    this.insert(row, vector, true);
  }

  private insert(row: CorpusRow, vector: TsVector, keepLexemesSorted: boolean): void {
    const id = this.freeIds.pop() ?? this.rows.length;
    this.rows[id] = row;
    this.idOf.set(row.uid, id);
    if (id >= this.marks.length) {
      const size = Math.max(id + 1, this.marks.length * 2);
      this.marks = grow(this.marks, size);
      this.offsetOf = grow(this.offsetOf, size);
      this.bytesOf = grow(this.bytesOf, size);
      this.known.length = 0;
    }
    const block = packVector(vector);
    if (this.arenaUsed + block.length > this.arena.length) this.arena = grow(this.arena, Math.max(this.arenaUsed + block.length, this.arena.length * 2));
    this.arena.set(block, this.arenaUsed);
    this.offsetOf[id] = this.arenaUsed;
    this.arenaUsed += block.length;
    const lexemes = vector.lexemes;
    this.lexemesOf[id] = lexemes;
    this.bytesOf[id] = estimatedBytes({ row, vector });
    this.heldBytes += this.bytesOf[id];
    for (let i = 0; i < lexemes.length; i++) {
      const posting = this.postings.get(lexemes[i]);
      if (posting) {
        posting.ids.push(id);
        posting.entries.push(i);
        lexemes[i] = posting.lexeme;
      } else {
        const created = { lexeme: lexemes[i], ids: [id], entries: [i] };
        this.postings.set(lexemes[i], created);
        if (keepLexemesSorted) this.lexicon.splice(lowerBound(this.lexicon, lexemes[i]), 0, created);
      }
    }
    for (const name of new Set(row.exactNames)) {
      const ids = this.exact.get(name);
      if (ids === undefined) this.exact.set(name, id);
      else if (typeof ids === 'number') this.exact.set(name, [ids, id]);
      else ids.push(id);
    }
  }

  remove(uid: string): void {
    const id = this.idOf.get(uid);
    if (id === undefined) return;
    const row = this.rows[id]!;
    for (const lexeme of this.lexemesOf[id]!) {
      const posting = this.postings.get(lexeme)!;
      const at = posting.ids.indexOf(id);
      posting.ids.splice(at, 1);
      posting.entries.splice(at, 1);
      if (!posting.ids.length) {
        this.postings.delete(lexeme);
        this.lexicon.splice(lowerBound(this.lexicon, lexeme), 1);
      }
    }
    for (const name of new Set(row.exactNames)) {
      const ids = this.exact.get(name)!;
      if (typeof ids === 'number') this.exact.delete(name);
      else {
        ids.splice(ids.indexOf(id), 1);
        if (ids.length === 1) this.exact.set(name, ids[0]);
      }
    }
    this.arenaGarbage += blockLength(this.arena, this.offsetOf[id]);
    this.heldBytes -= this.bytesOf[id];
    this.rows[id] = undefined;
    this.lexemesOf[id] = undefined;
    this.idOf.delete(uid);
    this.freeIds.push(id);
    if (this.arenaGarbage > 1 << 16 && this.arenaGarbage * 2 > this.arenaUsed) this.compact();
  }

  /** Copies the live blocks into a new arena, in id order. */
  private compact(): void {
    const arena = new Int32Array(Math.max(1 << 16, (this.arenaUsed - this.arenaGarbage) * 2));
    let used = 0;
    for (const id of this.idOf.values()) {
      const from = this.offsetOf[id];
      const length = blockLength(this.arena, from);
      arena.set(this.arena.subarray(from, from + length), used);
      this.offsetOf[id] = used;
      used += length;
    }
    this.arena = arena;
    this.arenaUsed = used;
    this.arenaGarbage = 0;
  }

  /**
   * The rows matching every word, ranked: at most `bound` of them (the lowest ids, as the SQL path
   * takes whichever the GIN index yields first) plus every exact name match; and how many matched
   * (counted up to `bound`). All of them go into `into`, or with `keep` only the first `keep` in
   * PostgreSQL's order of the results, `into` kept in that order (see keepFirst).
   */
  search(words: readonly string[], exactText: string, bound: number, into: RankedRow[], keep = Infinity): number {
    const operands = rankOperands(words);
    const matches = this.match(operands);
    const last = this.stamp;
    const taken = matches.length > bound ? this.lowestMatched(bound) : matches;
    const exactIds = this.exact.get(exactText);
    const exact = new Set(exactIds === undefined ? [] : [exactIds].flat().filter((id) => this.marks[id] === last));
    const candidates = exact.size ? [...new Set([...taken, ...exact])] : taken;
    // In id order, which is mostly arena order: the blocks are read front to back.
    candidates.sort((a, b) => a - b);
    const known = new Int32Array(operands.length);
    for (const id of candidates) {
      let searched = false;
      for (let i = 0; i < operands.length; i++) {
        known[i] = this.known[i][id];
        if (known[i] < 0) searched = true;
      }
      const rank = tsRankPacked(this.arena, this.offsetOf[id], operands, known, searched ? this.lexemesOf[id] : undefined) + (exact.has(id) ? EXACT_NAME_BOOST : 0);
      if (keep === Infinity) into.push({ kind: this.kind, row: this.rows[id]!, rank });
      else keepFirst(into, keep, this.kind, this.rows[id]!, rank);
    }
    return candidates.length;
  }

  /**
   * Ids of the rows holding, for every word, a lexeme that starts with it. Word i marks a row with
   * base + i only if word i - 1 marked it, so one pass per word over its postings intersects them
   * (and a row holding several lexemes of one prefix is counted once); the last word's marks are
   * left for exact-name candidates to be checked against. Each pass also notes, per row, the lexeme
   * of the row the word matched, or -1 when it matched several (ranking then searches the vector).
   * Once fewer rows remain than a word has postings, the word is looked up in those rows instead, so
   * a query of many short, common prefixes costs about its rarest word.
   */
  private match(words: readonly string[]): number[] {
    const lists = words.map((word) => this.postingsOfPrefix(word));
    const base = this.nextStamps(words.length);
    this.stamp = base + words.length - 1;
    if (lists.some((l) => !l.length)) return [];
    const order = lists.map((l, slot) => ({ l, slot, n: l.reduce((sum, p) => sum + p.ids.length, 0) })).sort((a, b) => a.n - b.n);
    const marks = this.marks;
    let current: number[] | undefined;
    for (let i = 0; i < order.length; i++) {
      const want = base + i - 1;
      const set = base + i;
      const known = (this.known[order[i].slot] ??= new Int32Array(marks.length));
      // The rows passing this word are listed only if the next word may be looked up in them (their
      // count is at most this word's postings) and for the last word; otherwise only marked.
      const next: number[] | undefined = i === order.length - 1 || order[i].n * CHECK_COST < order[i + 1].n ? [] : undefined;
      if (current && current.length * CHECK_COST < order[i].n) {
        // Fewer rows left than this word has postings: look the word up in each row instead.
        const word = words[order[i].slot];
        for (const id of current) {
          const lexemes = this.lexemesOf[id]!;
          const e = firstAtOrAfter(lexemes, word);
          if (e >= lexemes.length || !lexemes[e].startsWith(word)) continue;
          marks[id] = set;
          known[id] = e + 1 < lexemes.length && lexemes[e + 1].startsWith(word) ? -1 : e;
          next?.push(id);
        }
      } else {
        for (const { ids, entries } of order[i].l) {
          for (let j = 0; j < ids.length; j++) {
            const id = ids[j];
            const mark = marks[id];
            if (mark === set) known[id] = -1;
            if (i === 0 ? mark >= base : mark !== want) continue;
            marks[id] = set;
            known[id] = entries[j];
            next?.push(id);
          }
        }
      }
      current = next;
      if (current && !current.length) break;
    }
    return current ?? [];
  }

  /** The `count` lowest ids the last match marked as matching every word (ids in order, no sort). */
  private lowestMatched(count: number): number[] {
    const taken: number[] = [];
    for (let id = 0; id < this.rows.length && taken.length < count; id++) if (this.marks[id] === this.stamp) taken.push(id);
    return taken;
  }

  private nextStamps(count: number): number {
    if (this.stamp + count + 1 >= 0xffffffff) {
      this.marks.fill(0);
      this.stamp = 0;
    }
    const base = this.stamp + 1;
    this.stamp += count;
    return base;
  }

  private postingsOfPrefix(word: string): Posting[] {
    const lists: Posting[] = [];
    for (let i = lowerBound(this.lexicon, word); i < this.lexicon.length && this.lexicon[i].lexeme.startsWith(word); i++) {
      lists.push(this.lexicon[i]);
    }
    return lists;
  }
}

/**
 * Roughly what one row costs the index in memory: its strings (two bytes a character at most), a
 * posting and a reference per lexeme, its arena block, and the objects around them. Measured
 * against the heap on the search bench's 110,000 rows (README): within 20 %.
 */
export function estimatedBytes({ row, vector }: IndexedRow): number {
  const d = row.display;
  const characters = row.uid.length + row.sortName.length + row.exactNames.reduce((sum, n) => sum + n.length, 0)
    + d.name.length + d.username.length + (d.description?.length ?? 0) + (d.bio?.length ?? 0);
  return 2 * characters + 64 * vector.lexemes.length + 4 * (1 + vector.packed.length) + 480;
}

const yieldToRequests = () => new Promise((resolve) => setImmediate(resolve));

/**
 * `items` sorted, a slice at a time: slices of SLICE sorted alone, then merged pairwise, yielding to
 * the event loop in between (one sort of 100,000 lexemes held it for ~100 ms).
 */
async function sortedInSlices<T>(items: T[], compare: (a: T, b: T) => number): Promise<T[]> {
  const SLICE = 8_192;
  let runs: T[][] = [];
  for (let i = 0; i < items.length; i += SLICE) {
    runs.push(items.slice(i, i + SLICE).sort(compare));
    await yieldToRequests();
  }
  while (runs.length > 1) {
    const merged: T[][] = [];
    for (let i = 0; i < runs.length; i += 2) {
      merged.push(i + 1 < runs.length ? merge(runs[i], runs[i + 1], compare) : runs[i]);
      await yieldToRequests();
    }
    runs = merged;
  }
  return runs[0] ?? [];
}

function merge<T>(a: T[], b: T[], compare: (a: T, b: T) => number): T[] {
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(compare(a[i], b[j]) <= 0 ? a[i++] : b[j++]);
  while (i < a.length) out.push(a[i++]);
  while (j < b.length) out.push(b[j++]);
  return out;
}

function grow<T extends Int32Array | Uint32Array>(array: T, size: number): T {
  const grown = new (array.constructor as new (size: number) => T)(size);
  grown.set(array);
  return grown;
}

/** A block's length: its lexeme count, the count's position ends, then the positions (the last end). */
function blockLength(arena: Int32Array, offset: number): number {
  const n = arena[offset];
  return 1 + n + (n ? arena[offset + n] : 0);
}

function lowerBound(sorted: readonly Posting[], value: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid].lexeme < value) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * How a row of `rank` compares with an entry, in PostgreSQL's order of the results: rank, then the
 * name in byte order (`COLLATE "C"`, which is code point order), then the uid.
 */
function compareRanked(rank: number, row: CorpusRow, b: RankedRow): number {
  if (rank !== b.rank) return b.rank - rank;
  const byName = compareCodePoints(row.sortName, b.row.sortName);
  if (byName) return byName;
  return row.uid < b.row.uid ? -1 : row.uid > b.row.uid ? 1 : 0;
}

/**
 * Puts a ranked row into `top` (in PostgreSQL's order, at most `keep` long) if it belongs among the
 * first `keep`; the row's entry is built only then. A page needs a few rows of up to a thousand
 * candidates: building an entry for each and picking the page afterwards was a tenth of an uncached
 * search's CPU, most of it garbage collection.
 */
function keepFirst(top: RankedRow[], keep: number, kind: CorpusKind, row: CorpusRow, rank: number): void {
  if (keep <= 0 || (top.length >= keep && compareRanked(rank, row, top[top.length - 1]) >= 0)) return;
  let low = 0;
  let high = top.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareRanked(rank, row, top[mid]) >= 0) low = mid + 1;
    else high = mid;
  }
  top.splice(low, 0, { kind, row, rank });
  if (top.length > keep) top.pop();
}
