import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import { makeRunnableCircuit, ServiceProcess, spawnServiceProcess, startHoldingTarget, startHttpTarget, submitRun, waitForRun } from './support/run-factories';
import { CircuitRun } from '../src/models/CircuitRun';

jest.setTimeout(90_000);

let target: Awaited<ReturnType<typeof startHoldingTarget>>;
beforeAll(async () => { target = await startHoldingTarget(); });
afterAll(async () => { await target.close(); });

describe('one worker with the default settings', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp({ jobConcurrency: 20 }); });
  afterAll(async () => { await t.close(); });

  test('holds 200 runs waiting on an upstream at once, far more than its 20 job slots (DESIGN §9.1)', async () => {
    const owner = await makeUser({ credits: 500 });
    const { adaptorUid } = await makeRunnableCircuit(owner, target.holdDefinition());
    const uids: string[] = [];
    for (let i = 0; i < 200; i++) uids.push((await submitRun(t, owner.token, adaptorUid, { input: {} })).body.payload.uid);
    await target.untilHeld(200);
    target.release();
    for (const uid of uids) expect((await waitForRun(t, uid, owner.token, 30_000)).state).toBe('COMPLETED');
  });
});

describe('a worker that stops with runs in flight', () => {
  let t: TestApp;
  const processes: ServiceProcess[] = [];
  beforeAll(async () => { t = await startTestApp({ runWorker: false }); });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill('SIGKILL')));
    await t.close();
  });

  test('gives them back: the next worker goes on at once from their journal, not counting the stop as a crash', async () => {
    const owner = await makeUser({ credits: 10 });
    let firstCalls = 0;
    const counting = await startHttpTarget((_req, res) => {
      firstCalls++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"n":1}');
    });
    try {
      const { adaptorUid } = await makeRunnableCircuit(owner, {
        query_schema: { type: 'object' },
        steps: [
          { id: 'first', kind: 'http', method: 'GET', url: counting.url },
          { id: 'wait', kind: 'http', method: 'GET', url: `${target.url}/hold?n={{steps.first.output.n}}` },
        ],
      });
      // A stop lets runs end for RUN_DRAIN_MS first: this one waits longer.
      const first = await spawnServiceProcess('worker', t.databaseUrl, { JOB_LOCK_LIFETIME_MS: '60000' });
      processes.push(first);
      const uid = (await submitRun(t, owner.token, adaptorUid, { input: {} })).body.payload.uid as string;
      await target.untilHeld(1);
      await first.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      const given = await CircuitRun.findByPk(uid);
      expect(given!.state).toBe('RUNNING');

      const second = await spawnServiceProcess('worker', t.databaseUrl, { JOB_LOCK_LIFETIME_MS: '60000' });
      processes.push(second);
      // Taken over from its journal without waiting for the 60 s lock lifetime (the aborted request stays in `held`).
      const deadline = Date.now() + 30_000;
      while (target.held.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(target.held.length).toBe(2);
      target.release();
      const run = await waitForRun(t, uid, owner.token, 30_000);
      expect(run.state).toBe('COMPLETED');
      expect(firstCalls).toBe(1);
      const [row] = await t.app.services.sequelize.query<{ attempt: number; handed_back: number }>(
        'SELECT attempt, handed_back FROM circuit_runs WHERE uid = $1', { bind: [uid], type: 'SELECT' as never },
      );
      expect(row).toEqual({ attempt: 2, handed_back: 1 });
    } finally {
      await counting.close();
    }
  });
});
