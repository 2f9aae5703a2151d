import type http from 'node:http';
import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import {
  makeRunnableCircuit,
  ServiceProcess,
  spawnServiceProcess,
  startHttpTarget,
  submitRun,
  waitForRun,
} from './support/run-factories';
import { until } from './support/wait';

jest.setTimeout(120_000);

/** An upstream that holds every `/hold` request until released, and remembers the most it held at once. */
async function countingHoldTarget() {
  const held: http.ServerResponse[] = [];
  let most = 0;
  const target = await startHttpTarget((req, res) => {
    if (!req.url?.startsWith('/hold'))
      return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    held.push(res);
    most = Math.max(most, held.length);
  });
  return {
    url: target.url,
    held,
    get most() {
      return most;
    },
    release: () => {
      for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"done":true}');
    },
    close: async () => {
      for (const res of held.splice(0)) res.destroy();
      await target.close();
    },
  };
}

describe('USER_MAX_CONCURRENT_RUNS across two worker processes', () => {
  let t: TestApp;
  let target: Awaited<ReturnType<typeof countingHoldTarget>>;
  const workers: ServiceProcess[] = [];
  beforeAll(async () => {
    target = await countingHoldTarget();
    t = await startTestApp({ runWorker: false });
    workers.push(
      ...(await Promise.all(
        [1, 2].map(() => spawnServiceProcess('worker', t.databaseUrl, { USER_MAX_CONCURRENT_RUNS: '3' })),
      )),
    );
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill('SIGKILL')));
    await target.close();
    await t.close();
  });

  const slotWaiting = async (userUid: string) => {
    const [row] = await t.app.services.sequelize.query<{ n: string }>(
      `SELECT count(*) AS n FROM circuit_runs WHERE user_uid = $1 AND state = 'PROVISIONED' AND slot_wait`,
      { bind: [userUid], type: 'SELECT' as never },
    );
    return Number(row.n);
  };

  test('runs beyond the limit wait PROVISIONED, then start as earlier ones finish: all complete, never more than 3 at once', async () => {
    const owner = await makeUser({ credits: 100 });
    const other = await makeUser({ credits: 10 });
    const { adaptorUid } = await makeRunnableCircuit(owner, {
      query_schema: { type: 'object' },
      steps: [{ id: 'wait', kind: 'http', method: 'GET', url: `${target.url}/hold` }],
    });
    const quick = await makeRunnableCircuit(other, {
      query_schema: { type: 'object' },
      steps: [{ id: 'hi', kind: 'template', template: 'hi' }],
    });

    const uids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await submitRun(t, owner.token, adaptorUid, { input: {} });
      expect(res.status).toBe(200);
      expect(res.body.payload.state).toBe('PROVISIONED');
      uids.push(res.body.payload.uid as string);
    }
    // Positive signals first: three held upstream, seven turned away by the claim and marked waiting.
    await until(
      '3 runs held and 7 waiting for a slot',
      async () => target.held.length === 3 && (await slotWaiting(owner.user.uid)) === 7,
    );
    const states = await Promise.all(
      uids.map(
        async (uid) =>
          (await t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token })).body.payload.state as string,
      ),
    );
    expect(states.filter((s) => s === 'RUNNING')).toHaveLength(3);
    expect(states.filter((s) => s === 'PROVISIONED')).toHaveLength(7);

    // Another user is not held back by the owner's waiting runs.
    const theirs = await submitRun(t, other.token, quick.adaptorUid, { input: {} });
    expect((await waitForRun(t, theirs.body.payload.uid as string, other.token, 15_000)).state).toBe('COMPLETED');

    // Each release ends the held runs; the waiting ones start as slots free, three at a time.
    const completed = async () => {
      const runs = await Promise.all(
        uids.map(
          async (uid) =>
            (await t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token })).body.payload.state as string,
        ),
      );
      return runs.filter((s) => s === 'COMPLETED').length;
    };
    await until(
      'all 10 runs completed',
      async () => {
        target.release();
        return (await completed()) === 10;
      },
      60_000,
    );
    expect(target.most).toBe(3);
    const [slots] = await t.app.services.sequelize.query<{ running: string }>(
      'SELECT s.claimed - e.ended AS running FROM user_run_slots s JOIN user_run_ends e USING (user_uid) WHERE user_uid = $1',
      { bind: [owner.user.uid], type: 'SELECT' as never },
    );
    expect(Number(slots.running)).toBe(0);
  });
});
