import crypto from 'node:crypto';
import type { Sequelize } from 'sequelize';
import type { Logger } from '../../logger';
import type { NotifiedCache } from '../../db/notified-cache';
import type { PageWindow } from '../common/pagination';
import { Corpus, type CorpusKind, type RankedRow } from './search.corpus';
import { readAllRows, readRows } from './search.index-rows';
import { SEARCH_MATCH_BOUND, SearchType } from './search.type';

export interface IndexedPage {
  rows: RankedRow[];
  total: number;
}

/** Query words the index answers; others go to the database, whose parser they are left to. */
const PLAIN_WORD = /^[a-z0-9]+$/;
/** More changed rows than this in one notification batch reload everything instead. */
const MAX_ROWS_PER_REFRESH = 5_000;
/** After a failed read the index retries a load after RETRY_MS, doubling up to MAX_RETRY_MS while it keeps failing. */
const RETRY_MS = 1_000;
const MAX_RETRY_MS = 10 * 60_000;
const OVER_BUDGET_RETRY_MS = 10 * 60_000;

/**
 * The searchable rows of both kinds, held in this process so that a search costs no database round
 * trip (src/graphql/search/search.corpus.ts answers as the SQL path would). Kept current through
 * `search_changed` (migration 0016 names the changed rows): a named row leaves the index the moment
 * its notification is heard — a circuit made private is gone at once, as from the page cache — and
 * comes back once re-read. The index answers only while it is complete and current:
 * - after its first load, and after every reconnect of the listener (a change may have gone unheard);
 * - not after a write of this process has committed until the database has sent back a marker
 *   notified after that commit (notifications arrive in commit order), so this process never
 *   answers from before its own write;
 * - not when its rows would take more than `maxBytes` of memory (SEARCH_INDEX_MAX_MB, estimated per
 *   row; 0 turns the index off): it is then dropped, and a load is tried again every OVER_BUDGET_RETRY_MS.
 * Until then searches run in SQL, as they always can.
 */
export class SearchIndex implements NotifiedCache {
  private corpora: Record<CorpusKind, Corpus> = { circuits: new Corpus('circuits'), users: new Corpus('users') };
  private live = false;
  private loaded = false;
  private generation = 0;
  private work: Promise<void> = Promise.resolve();
  private readonly pending: Record<CorpusKind, Set<string>> = { circuits: new Set(), users: new Set() };
  private refreshQueued = false;
  private readonly instance = crypto.randomBytes(6).toString('hex');
  private markersSent = 0;
  private markersHeard = 0;
  private retryMs = RETRY_MS;

  constructor(
    private readonly sequelize: Sequelize,
    private readonly log: Logger,
    private readonly maxBytes: number,
    /** Called whenever the rows the index answers from change (pages built from them are stale). */
    private readonly onChange: () => void,
  ) {}

  /** Whether searches may be answered from here now. */
  get usable(): boolean {
    return this.live && this.loaded && this.markersHeard >= this.markersSent;
  }

  setLive(live: boolean): void {
    this.live = live;
    this.loaded = false;
    this.generation++;
    if (live && this.maxBytes > 0) this.schedule(() => this.reload());
  }

  invalidate(payload?: string): void {
    if (payload === undefined) return this.afterLocalWrite();
    if (payload.startsWith('sync:')) {
      const [, instance, count] = payload.split(':');
      if (instance === this.instance) this.schedule(async () => { this.markersHeard = Math.max(this.markersHeard, Number(count)); });
      return;
    }
    const separator = payload.indexOf(':');
    const kind: CorpusKind | undefined = payload[0] === 'c' ? 'circuits' : payload[0] === 'u' ? 'users' : undefined;
    const uids = payload.slice(separator + 1);
    if (!kind || separator !== 1 || uids === '*') return this.reloadLater();
    for (const uid of uids.split(',')) {
      this.corpora[kind].remove(uid);
      this.pending[kind].add(uid);
    }
    this.onChange();
    if (this.pending[kind].size > MAX_ROWS_PER_REFRESH) return this.reloadLater();
    if (!this.refreshQueued) {
      this.refreshQueued = true;
      this.schedule(() => this.refresh());
    }
  }

  /** A page of the ranked matches, or undefined when the database must answer. */
  search(words: string[], exactText: string, type: SearchType, window: PageWindow): IndexedPage | undefined {
    if (!this.usable || !words.every((w) => PLAIN_WORD.test(w))) return undefined;
    const kinds: CorpusKind[] = type === SearchType.circuits ? ['circuits'] : type === SearchType.users ? ['users'] : ['circuits', 'users'];
    const take = Math.min(window.limit, Math.max(SEARCH_MATCH_BOUND - window.offset, 0));
    // The first offset + take of every kind's matches, in order: the page is what follows the offset.
    const ranked: RankedRow[] = [];
    let matched = 0;
    for (const kind of kinds) matched += this.corpora[kind].search(words, exactText, SEARCH_MATCH_BOUND, ranked, window.offset + take);
    return { rows: ranked.slice(window.offset), total: Math.min(matched, SEARCH_MATCH_BOUND) };
  }

  /** Resolves when everything scheduled so far has been applied (tests). */
  settled(): Promise<void> {
    return this.work;
  }

  private schedule(task: () => Promise<void>): void {
    const generation = this.generation;
    this.work = this.work.then(async () => {
      if (generation !== this.generation) return;
      try {
        await task();
      } catch (error) {
        // A failure that repeats (a database down, a row it cannot read) must not become a load per second.
        const retryMs = this.retryMs;
        this.retryMs = Math.min(retryMs * 2, MAX_RETRY_MS);
        this.log.warn({ err: error, retryMs }, 'search index: could not read the rows; searching in SQL until a load succeeds');
        this.loaded = false;
        setTimeout(() => { if (this.generation === generation) this.reloadLater(); }, retryMs).unref();
      }
    });
  }

  private reloadLater(): void {
    this.loaded = false;
    this.onChange();
    this.generation++;
    if (this.live && this.maxBytes > 0) this.schedule(() => this.reload());
  }

  private async reload(): Promise<void> {
    this.pending.circuits.clear();
    this.pending.users.clear();
    this.refreshQueued = false;
    // This load reads after every local write committed so far: their markers need not be awaited.
    const markers = this.markersSent;
    const generation = this.generation;
    const started = Date.now();
    const circuits = await readAllRows(this.sequelize, 'circuits', this.maxBytes);
    if (generation !== this.generation) return;
    if (circuits.over) return this.overBudget(circuits.bytes);
    const users = await readAllRows(this.sequelize, 'users', this.maxBytes - circuits.bytes);
    // Superseded while reading (the listener dropped, or a statement changed too many rows): the next load answers.
    if (generation !== this.generation) return;
    const bytes = circuits.bytes + users.bytes;
    if (users.over) return this.overBudget(bytes);
    const corpora = { circuits: await Corpus.of('circuits', circuits.rows), users: await Corpus.of('users', users.rows) };
    if (generation !== this.generation) return;
    // Rows named while this load read the tables may be older in it than the change: drop them until re-read.
    for (const kind of ['circuits', 'users'] as const) for (const uid of this.pending[kind]) corpora[kind].remove(uid);
    this.corpora = corpora;
    this.markersHeard = Math.max(this.markersHeard, markers);
    // ...and read them before answering: one may be this process's own write, made during the load.
    await this.refresh();
    if (generation !== this.generation) return;
    this.loaded = true;
    this.retryMs = RETRY_MS;
    this.onChange();
    this.log.info({ circuits: circuits.rows.length, users: users.rows.length, estimatedMb: Math.round(bytes / 2 ** 20), ms: Date.now() - started }, 'search index loaded');
  }

  private async refresh(): Promise<void> {
    this.refreshQueued = false;
    const generation = this.generation;
    for (const kind of ['circuits', 'users'] as const) {
      const uids = [...this.pending[kind]];
      if (!uids.length) continue;
      this.pending[kind].clear();
      const rows = await readRows(this.sequelize, kind, uids);
      if (generation !== this.generation) return;
      // A uid named again while this read ran stays out until its own re-read.
      for (const row of rows) if (!this.pending[kind].has(row.row.uid)) this.corpora[kind].upsert(row);
    }
    const bytes = this.corpora.circuits.bytes + this.corpora.users.bytes;
    if (bytes > this.maxBytes) return this.overBudget(bytes);
    this.onChange();
  }

  /** Drops the index (its memory too) and tries a load again later: rows may have gone by then. */
  private overBudget(bytes: number): void {
    this.log.warn({ estimatedMb: Math.round(bytes / 2 ** 20), maxMb: Math.round(this.maxBytes / 2 ** 20) }, 'search index: the rows exceed SEARCH_INDEX_MAX_MB; searching in SQL');
    this.loaded = false;
    this.corpora = { circuits: new Corpus('circuits'), users: new Corpus('users') };
    this.generation++;
    this.onChange();
    const generation = this.generation;
    setTimeout(() => { if (this.generation === generation) this.reloadLater(); }, OVER_BUDGET_RETRY_MS).unref();
  }

  /**
   * A write of this process has committed: answer in SQL until a marker notified after it comes back,
   * by when every notification of that write has been applied.
   */
  private afterLocalWrite(): void {
    const marker = ++this.markersSent;
    this.sequelize.query(`SELECT pg_notify('search_changed', $1)`, { bind: [`sync:${this.instance}:${marker}`] }).catch((error: unknown) => {
      this.log.warn({ err: error }, 'search index: could not send its marker; searching in SQL until reloaded');
      this.reloadLater();
    });
  }
}
