import fs from 'node:fs';
import path from 'node:path';
import type { Migration } from './migration';

export type { Migration };

/**
 * The released migrations, in the order they were released: numbers were taken when work started and some
 * landed after later numbers (0007 before 0005, 0006 after 0011), and a database runs them in the order it
 * first got them. A migration once released is never edited. A new one needs no line here: the files of this
 * folder not named below run after these, in the order of their names.
 */
const RELEASED = [
  '0001-foundation',
  '0002-runs',
  '0003-boards-search',
  '0004-blobs-web',
  '0009-auth-changed',
  '0010-circuit-deprecated-at',
  '0011-job-outbox',
  '0006-credits',
  '0007-webhooks-schedules',
  '0005-run-control',
  '0012-auth-changed-ignores-balance',
  '0013-state-event-after-logged-events',
  '0014-search-lexicon',
  '0015-run-reads-changed',
  '0016-search-changed-rows',
  '0017-auth-changed-by-column',
  '0018-run-steps',
  '0019-circuit-aliases',
  '0020-step-cache',
  '0021-run-traceparent',
  '0022-token-limits',
  '0023-run-labels-batches',
  '0024-user-run-slots',
  '0025-run-visibility-changed',
  '0026-search-in-postgres',
  '0029-run-metric-totals',
  '0030-search-postings',
];

function isMigration(value: unknown): value is Migration {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Migration).name === 'string' &&
    typeof (value as Migration).up === 'string'
  );
}

/** Every migration file of this folder (`NNNN-name.ts`, or `.js` once built), each exporting one Migration named after its file. */
function loadMigrations(): Migration[] {
  const byName = new Map<string, Migration>();
  for (const file of fs.readdirSync(__dirname).filter((name) => /^\d{4}-[\w-]+\.(js|ts)$/.test(name))) {
    const name = file.replace(/\.(js|ts)$/, '');
    const migration = Object.values(require(path.join(__dirname, file)) as Record<string, unknown>).find(isMigration);
    if (!migration || migration.name !== name)
      throw new Error(`src/db/migrations/${file} must export one Migration named '${name}'`);
    byName.set(name, migration);
  }
  const newer = [...byName.keys()].filter((name) => !RELEASED.includes(name)).sort();
  return [...RELEASED, ...newer].map((name) => {
    const migration = byName.get(name);
    if (!migration) throw new Error(`the released migration ${name} is missing from src/db/migrations/`);
    return migration;
  });
}

export const migrations: Migration[] = loadMigrations().filter((m) => m.up.trim() !== '');
