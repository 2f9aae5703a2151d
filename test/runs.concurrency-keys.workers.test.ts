import { QueryTypes } from 'sequelize';
import { startTestApp, type TestApp } from './support/app';
import { makeUser } from './support/factories';
import {
  makeRunnableCircuit,
  spawnServiceProcess,
  startHttpTarget,
  type ServiceProcess,
} from './support/run-factories';
import type { CircuitDefinition } from '../src/domain/definition';

jest.setTimeout(240_000);

const KEYS = 10;
const RUNS = 200;
const LIMIT = 3;

/** A slow loopback upstream: answers each `/slow/<key>` after 100–300 ms, counting requests in flight per key and in all. */
async function slowUpstream() {
  const inFlight = new Map<string, number>();
  const most = new Map<string, number>();
  let total = 0;
  let mostTotal = 0;
  const target = await startHttpTarget((req, res) => {
    const key = (req.url ?? '').split('/')[2] ?? '';
    inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
    most.set(key, Math.max(most.get(key) ?? 0, inFlight.get(key)!));
    total++;
    mostTotal = Math.max(mostTotal, total);
    setTimeout(
      () => {
        inFlight.set(key, inFlight.get(key)! - 1);
        total--;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      },
      100 + Math.floor(Math.random() * 200),
    );
  });
  return {
    url: target.url,
    most,
    get mostTotal() {
      return mostTotal;
    },
    close: () => target.close(),
  };
}

describe('concurrency keys across two worker processes', () => {
  let t: TestApp;
  let upstream: Awaited<ReturnType<typeof slowUpstream>>;
  const workers: ServiceProcess[] = [];
  beforeAll(async () => {
    upstream = await slowUpstream();
    t = await startTestApp({ runWorker: false });
    workers.push(
      ...(await Promise.all([
        spawnServiceProcess('worker', t.databaseUrl),
        spawnServiceProcess('worker', t.databaseUrl),
      ])),
    );
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill('SIGKILL')));
    await upstream.close();
    await t.close();
  });

  test(`${RUNS} runs of ${KEYS} keys, limit ${LIMIT}: never more than ${LIMIT} RUNNING per key (sampled, and at the upstream), keys in parallel, all complete`, async () => {
    const owner = await makeUser({ credits: 1000 });
    const definition: CircuitDefinition = {
      query_schema: { type: 'object', properties: { customer: { type: 'string' } }, required: ['customer'] },
      steps: [{ id: 'call', kind: 'http', method: 'GET', url: `${upstream.url}/slow/{{input.customer}}` }],
      concurrency: { limit: LIMIT, key: '{{input.customer}}' },
    };
    const { adaptorUid, circuit } = await makeRunnableCircuit(owner, definition);
    const inputs = Array.from({ length: RUNS }, (_, i) => ({ customer: `customer-${i % KEYS}` }));

    const sequelize = t.app.services.sequelize;
    let sampling = true;
    let samples = 0;
    let mostSampled = 0;
    let mostKeysAtOnce = 0;
    const sampler = (async () => {
      while (sampling) {
        const rows = await sequelize.query<{ key: string; n: string }>(
          `SELECT concurrency_key AS key, count(*) AS n FROM circuit_runs
            WHERE circuit_uid = $1 AND state = 'RUNNING' AND paused_at IS NULL GROUP BY concurrency_key`,
          { bind: [circuit.uid], type: QueryTypes.SELECT },
        );
        samples++;
        for (const row of rows) mostSampled = Math.max(mostSampled, Number(row.n));
        mostKeysAtOnce = Math.max(mostKeysAtOnce, rows.length);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();

    const started = Date.now();
    for (let i = 0; i < RUNS; i += 100) {
      const res = await t.rest('POST', `/circuit-adaptors/${adaptorUid}/batches`, {
        token: owner.token,
        body: { inputs: inputs.slice(i, i + 100) },
      });
      expect(res.status).toBe(200);
    }
    const deadline = Date.now() + 180_000;
    for (;;) {
      const [row] = await sequelize.query<{ n: string }>(
        `SELECT count(*) AS n FROM circuit_runs WHERE circuit_uid = $1 AND state = 'COMPLETED'`,
        { bind: [circuit.uid], type: QueryTypes.SELECT },
      );
      if (Number(row.n) === RUNS) break;
      if (Date.now() > deadline) throw new Error(`only ${row.n} of ${RUNS} runs completed`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const tookMs = Date.now() - started;
    sampling = false;
    await sampler;

    console.log(
      `${RUNS} runs of ${KEYS} keys (limit ${LIMIT}) on 2 workers in ${tookMs} ms; ${samples} samples; most RUNNING of one key sampled ${mostSampled}, at the upstream ${Math.max(...upstream.most.values())}; most keys RUNNING at once ${mostKeysAtOnce}; most requests at the upstream at once ${upstream.mostTotal}`,
    );
    expect(samples).toBeGreaterThan(20);
    expect(mostSampled).toBeLessThanOrEqual(LIMIT);
    expect(upstream.most.size).toBe(KEYS);
    for (const most of upstream.most.values()) expect(most).toBeLessThanOrEqual(LIMIT);
    // Different keys in parallel: more requests at once than one key may make, and several keys at once.
    expect(upstream.mostTotal).toBeGreaterThanOrEqual(2 * LIMIT);
    expect(mostKeysAtOnce).toBeGreaterThanOrEqual(KEYS / 2);
    // Every slot given back, and each key's rows deleted with its last run.
    const rows = await sequelize.query<{ key: string }>(
      `SELECT key FROM run_key_slots WHERE key LIKE $1 UNION ALL SELECT key FROM run_key_ends WHERE key LIKE $1`,
      { bind: [`${circuit.uid}:%`], type: QueryTypes.SELECT },
    );
    expect(rows).toEqual([]);
  });
});
