import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import {
  makeRunnableCircuit,
  ServiceProcess,
  spawnServiceProcess,
  startHoldingTarget,
  startHttpTarget,
  submitRun,
  waitForRun,
} from './support/run-factories';
import { CircuitRun } from '../src/models/CircuitRun';

jest.setTimeout(90_000);

let target: Awaited<ReturnType<typeof startHoldingTarget>>;
beforeAll(async () => {
  target = await startHoldingTarget();
});
afterAll(async () => {
  await target.close();
});

describe('one worker with the default settings', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ jobConcurrency: 20 });
  });
  afterAll(async () => {
    await t.close();
  });

  test('holds 200 runs waiting on an upstream at once, far more than its 20 job slots', async () => {
    const owner = await makeUser({ credits: 500 });
    const { adaptorUid } = await makeRunnableCircuit(owner, target.holdDefinition());
    const uids: string[] = [];
    for (let i = 0; i < 200; i++)
      uids.push((await submitRun(t, owner.token, adaptorUid, { input: {} })).body.payload.uid);
    await target.untilHeld(200);
    target.release();
    for (const uid of uids) expect((await waitForRun(t, uid, owner.token, 30_000)).state).toBe('COMPLETED');
  });
});

describe('a worker that stops with runs in flight', () => {
  let t: TestApp;
  const processes: ServiceProcess[] = [];
  beforeAll(async () => {
    t = await startTestApp({ runWorker: false });
  });
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
        'SELECT attempt, handed_back FROM circuit_runs WHERE uid = $1',
        { bind: [uid], type: 'SELECT' as never },
      );
      expect(row).toEqual({ attempt: 2, handed_back: 1 });
    } finally {
      await counting.close();
    }
  });
});

describe('the service (main.js, its worker in a thread) stopped with a run in a long http step', () => {
  let t: TestApp;
  const processes: ServiceProcess[] = [];
  beforeAll(async () => {
    t = await startTestApp({ runWorker: false });
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill('SIGKILL')));
    await t.close();
  });

  test('stops promptly on SIGINT: the run is given back at once (its upstream request ended, not waited for), and a new worker completes it', async () => {
    const owner = await makeUser({ credits: 10 });
    const { adaptorUid } = await makeRunnableCircuit(owner, target.holdDefinition());
    // A lock lifetime far longer than the test: only a give-back lets another worker go on at once.
    const service = await spawnServiceProcess('api', t.databaseUrl, {
      RUN_WORKER: 'true',
      JOB_LOCK_LIFETIME_MS: '60000',
    });
    processes.push(service);
    const uid = (await submitRun(t, owner.token, adaptorUid, { input: {} })).body.payload.uid as string;
    await target.untilHeld(1);
    const upstream = target.held[0];
    let upstreamClosed = false;
    upstream.once('close', () => {
      upstreamClosed = true;
    });

    const began = Date.now();
    await service.kill('SIGINT');
    const took = Date.now() - began;
    expect(await service.exited).toBe(0);
    console.log(`main.js with a run in a held http step: stopped in ${took} ms`);
    // It once waited 5 s for the run to end (it could not), then gave it back. Generous: 2 shared cores.
    expect(took).toBeLessThan(3_000);
    expect(service.output.join('\n')).not.toMatch(/shutdown took over|took over .* s/);
    // Nothing left behind: the upstream request was ended by the stop, and the run is given back (not a crash).
    const closeDeadline = Date.now() + 2_000;
    while (!upstreamClosed && Date.now() < closeDeadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(upstreamClosed).toBe(true);
    const [given] = await t.app.services.sequelize.query<{ state: string; handed_back: number }>(
      'SELECT state, handed_back FROM circuit_runs WHERE uid = $1',
      { bind: [uid], type: 'SELECT' as never },
    );
    expect(given).toEqual({ state: 'RUNNING', handed_back: 1 });

    const worker = await spawnServiceProcess('worker', t.databaseUrl, { JOB_LOCK_LIFETIME_MS: '60000' });
    processes.push(worker);
    const deadline = Date.now() + 30_000;
    // Taken over at once (the aborted request stays in `held`), not after the 60 s lock lifetime.
    while (target.held.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(target.held.length).toBe(2);
    target.release();
    expect((await waitForRun(t, uid, owner.token, 30_000)).state).toBe('COMPLETED');
  });
});
