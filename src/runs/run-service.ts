import type { Sequelize } from 'sequelize';
import { LRUCache } from 'lru-cache';
import type OpenAI from 'openai';
import type { RunQueue } from '../queue/agenda';
import { CircuitVersion } from '../models';
import { RunAdmission } from './admission';
import { RunReadCache } from './read-cache';
import { createJournalWriter, type JournalWriter } from './step-journal';
import { createEventAppender, type EventAppender } from './events/log';
import { createClaimBatcher, createRunEnds, type ClaimBatcher, type RunEnds } from './transitions';

/** What a run needs of its version: versions are immutable, so they are kept by uid. */
export type RunVersion = Pick<CircuitVersion, 'uid' | 'circuit_uid' | 'definition'>;

/**
 * The run wing's long-lived pieces of one process, built once with the wing (createRunWing) and
 * passed to its files as `runService` (./ports.ts): what batches the writes of runs that arrive together, and what
 * is kept in memory for their reads. Nothing of it hides in a module.
 */
export interface RunService {
  /** Queries of one user arriving together are admitted in one statement (src/runs/admission.ts). */
  readonly admission: RunAdmission;
  /** Claims arriving while another is written share the next statement (src/runs/transitions.ts). */
  readonly claims: ClaimBatcher;
  /** Identical step-cache misses in flight in this process share one call (src/runs/step-cache.ts). */
  readonly cacheFlights: Map<string, Promise<unknown>>;
  /** Ends of one user's runs arriving together are written, and charged, in one statement (src/runs/transitions.ts). */
  readonly runEnds: RunEnds;
  /** Step and output events of many runs are appended together (src/runs/events/log.ts). */
  readonly eventAppends: EventAppender;
  /** Completed steps of many runs are journaled together (src/runs/step-journal.ts). */
  readonly journalWrites: JournalWriter;
  /** Rows a read of an ended run needs, dropped on `run_reads_changed` (src/runs/read-cache.ts). */
  readonly readCache: RunReadCache;
  /** Versions by uid (immutable once published); `fetch` reads a missing one once for all who ask at once. */
  readonly versions: LRUCache<string, RunVersion>;
  /** The model providers' clients by base URL and key, each with its connection pool (src/engine/steps/llm.ts). */
  readonly llmClients: Map<string, OpenAI>;
}

/** `notifyChannel`: the run-event bus's NOTIFY channel when it is PostgreSQL's (events are announced in their statement). */
export function createRunService(
  sequelize: Sequelize,
  runQueue: Pick<RunQueue, 'sqlEnqueue'>,
  notifyChannel?: string,
): RunService {
  return {
    cacheFlights: new Map(),
    eventAppends: createEventAppender(sequelize, notifyChannel),
    admission: new RunAdmission({ sequelize, runQueue }),
    claims: createClaimBatcher(sequelize),
    runEnds: createRunEnds(sequelize, notifyChannel),
    journalWrites: createJournalWriter(sequelize),
    readCache: new RunReadCache(),
    versions: new LRUCache<string, RunVersion>({ max: 2_000, fetchMethod: readVersion }),
    llmClients: new Map(),
  };
}

async function readVersion(uid: string): Promise<RunVersion | undefined> {
  const version = await CircuitVersion.findByPk(uid, { attributes: ['uid', 'circuit_uid', 'definition'] });
  return version ? { uid: version.uid, circuit_uid: version.circuit_uid, definition: version.definition } : undefined;
}
