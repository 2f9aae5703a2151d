import { QueryTypes } from 'sequelize';
import { startTestApp, type TestApp } from './support/app';
import { makeUser } from './support/factories';
import { makeRunnableCircuit } from './support/run-factories';
import { until } from './support/wait';
import {
  claimRun,
  createClaimBatcher,
  createRunEnds,
  deleteIdleKeyRows,
  endRunTogether,
  finishRun,
} from '../src/runs/transitions';

/**
 * A concurrency key's slot rows (`run_key_slots`, `run_key_ends`) are deleted with the key's last run, by the
 * statement that ends it, and made again by the statement that admits the key's next run. Driven here as three
 * workers would drive them, without a worker process: runs of 40 keys (limit 2) admitted in batches while they are
 * claimed (three claim batchers at once), ended and cancelled, so that keys lose their last run and get a new one
 * at the same moments over and over. The limit holds throughout (each claim is counted until its run's end is
 * sent, and RUNNING runs are sampled), and once every run has ended no key keeps a row: the ends deleted them, but
 * for the few whose last end met a claim statement holding the key's row (it never waits for one), which the run
 * sweep's deleteIdleKeyRows deletes.
 */

jest.setTimeout(180_000);

const KEYS = 40;
const LIMIT = 2;
const BATCHES = 16;
const PER_BATCH = 40;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ runWorker: false, runRateLimitPerMinute: 0 });
});
afterAll(async () => {
  await t.close();
});

test(`${BATCHES * PER_BATCH} runs of ${KEYS} keys (limit ${LIMIT}) admitted, claimed by three workers, ended and cancelled at once: never over the limit, no key's rows left`, async () => {
  const sequelize = t.app.services.sequelize;
  const owner = await makeUser({ credits: 100_000 });
  const { adaptorUid, circuit } = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object', properties: { k: { type: 'string' } } },
    steps: [{ id: 'a', kind: 'template', template: 'x' }],
    concurrency: { limit: LIMIT, key: '{{input.k}}' },
  });
  const query = <T extends object>(sql: string, bind: unknown[] = []) =>
    sequelize.query<T>(sql, { bind, type: QueryTypes.SELECT });

  // Claims not yet ended, per key: counted when a claim answers, uncounted before its end is sent, so this count is
  // never above what PostgreSQL holds RUNNING.
  const holding = new Map<string, number>();
  let mostHeld = 0;
  let claims = 0;
  let cancels = 0;
  let admitting = true;

  // Keys whose rows were gone once their runs had all ended, while their next runs were still to come: pruning
  // raced admission, not only the end.
  let keysEmptiedWhileAdmitting = 0;
  const window = (b: number) => Array.from({ length: 10 }, (_, i) => `k${(b * 5 + i) % KEYS}`);
  const admit = (async () => {
    for (let b = 0; b < BATCHES; b++) {
      if (b >= 2) {
        // The keys of batch b - 2 that batch b - 1 did not run: once their runs have ended, their rows are gone
        // (but for an end that met a claim holding the key's row), while the workers claim the next batches.
        const earlier = new Set(window(b - 1));
        const done = window(b - 2)
          .filter((k) => !earlier.has(k))
          .map((k) => `${circuit.uid}:${k}`);
        await until(
          'the keys leaving the window to have no run left',
          async () => {
            const [row] = await query<{ n: string }>(
              `SELECT count(*) AS n FROM circuit_runs
              WHERE circuit_uid = $1 AND concurrency_key = ANY($2::text[]) AND state IN ('PROVISIONED', 'RUNNING')`,
              [circuit.uid, done],
            );
            return Number(row.n) === 0;
          },
          60_000,
        );
        const kept = await query<{ key: string }>(`SELECT key FROM run_key_slots WHERE key = ANY($1::text[])`, [done]);
        keysEmptiedWhileAdmitting += done.length - kept.length;
      }
      // Each batch runs 10 keys, the window moving 5 keys a batch: a key gets runs in two batches running, then none
      // for six, so keys keep losing their last run and getting new ones.
      const inputs = Array.from({ length: PER_BATCH }, (_, i) => ({ k: window(b)[i % 10] }));
      const res = await t.rest('POST', `/circuit-adaptors/${adaptorUid}/batches`, {
        token: owner.token,
        body: { inputs },
      });
      expect(res.status).toBe(200);
    }
    admitting = false;
  })();

  const worker = async (n: number) => {
    const batcher = createClaimBatcher(sequelize);
    // Ends go as a worker sends them: those arriving together share a statement.
    const ends = createRunEnds(sequelize);
    const identity = { name: `test-worker-${n}`, backendPid: null };
    for (;;) {
      const waiting = await query<{ uid: string }>(
        `SELECT uid FROM circuit_runs WHERE circuit_uid = $1 AND state = 'PROVISIONED' ORDER BY random() LIMIT 12`,
        [circuit.uid],
      );
      if (waiting.length === 0) {
        if (!admitting) return;
        await new Promise((resolve) => setTimeout(resolve, 5));
        continue;
      }
      // Every other round one waiting run is cancelled rather than claimed: a key's last run may end PROVISIONED.
      const [cancelled, ...claimable] = waiting;
      if (Math.random() < 1 / 2) {
        const ended = await finishRun(sequelize, {
          uid: cancelled.uid,
          attempt: 0,
          state: 'EXCEPTION',
          error: { code: 'Canceled', message: 'cancelled by the test' },
          cost: 1,
        });
        if (ended) cancels++;
      } else claimable.push(cancelled);
      const claimed = (
        await Promise.all(claimable.map((run) => claimRun(batcher, run.uid, 60_000, undefined, identity)))
      ).filter((claim) => claim !== null);
      for (const claim of claimed) {
        const key = claim.concurrency_key!;
        holding.set(key, (holding.get(key) ?? 0) + 1);
        mostHeld = Math.max(mostHeld, holding.get(key)!);
        claims++;
      }
      await Promise.all(
        claimed.map(async (claim) => {
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
          holding.set(claim.concurrency_key!, holding.get(claim.concurrency_key!)! - 1);
          await endRunTogether(
            ends,
            { uid: claim.uid, attempt: claim.attempt, state: 'COMPLETED', resultBlob: {}, cost: 1 },
            owner.user.uid,
          );
        }),
      );
    }
  };

  let sampling = true;
  let mostSampled = 0;
  let samples = 0;
  const sampler = (async () => {
    while (sampling) {
      const [row] = await query<{ n: string | null }>(
        `SELECT max(n) AS n FROM (SELECT count(*) AS n FROM circuit_runs
          WHERE circuit_uid = $1 AND state = 'RUNNING' AND paused_at IS NULL GROUP BY concurrency_key) c`,
        [circuit.uid],
      );
      mostSampled = Math.max(mostSampled, Number(row.n ?? 0));
      samples++;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();

  await Promise.all([admit, worker(1), worker(2), worker(3)]);
  sampling = false;
  await sampler;

  const [left] = await query<{ n: string }>(
    `SELECT count(*) AS n FROM circuit_runs WHERE circuit_uid = $1 AND state IN ('PROVISIONED', 'RUNNING')`,
    [circuit.uid],
  );
  expect(Number(left.n)).toBe(0);
  console.log(
    `${claims} claims and ${cancels} cancels over ${KEYS} keys; most held of one key ${mostHeld}, most sampled RUNNING ${mostSampled} (${samples} samples); ${keysEmptiedWhileAdmitting} keys lost their rows before their next runs came`,
  );
  expect(claims + cancels).toBe(BATCHES * PER_BATCH);
  expect(cancels).toBeGreaterThan(0);
  expect(mostHeld).toBeLessThanOrEqual(LIMIT);
  expect(mostSampled).toBeLessThanOrEqual(LIMIT);
  // The limit was reached: the claims did contend for the keys' slots.
  expect(mostHeld).toBe(LIMIT);
  // Keys lost their rows while others of their runs were still to come: pruning raced admission, not only the end.
  expect(keysEmptiedWhileAdmitting).toBeGreaterThan(0);

  const keyRows = () =>
    query<{ key: string }>(
      `SELECT key FROM run_key_slots WHERE key LIKE $1 UNION ALL SELECT key FROM run_key_ends WHERE key LIKE $1`,
      [`${circuit.uid}:%`],
    );
  const leftBehind = (await keyRows()).length;
  const swept = await deleteIdleKeyRows(sequelize);
  console.log(`key rows left by the ends: ${leftBehind}; keys whose rows the sweep deleted: ${swept}`);
  expect(swept * 2).toBe(leftBehind);
  expect(await keyRows()).toEqual([]);
});
