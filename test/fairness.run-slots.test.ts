import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import { makeRunnableCircuit, startHoldingTarget, submitRun, waitForRun } from './support/run-factories';
import { until } from './support/wait';

jest.setTimeout(120_000);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

describe('run slots are shared fairly between users', () => {
  let t: TestApp;
  let target: Awaited<ReturnType<typeof startHoldingTarget>>;
  // A small worker, so that one user's backlog could fill it: 8 runs in flight, a user's share 50 % (4).
  beforeAll(async () => {
    target = await startHoldingTarget();
    t = await startTestApp({ runMaxInflight: 8, runUserInflightSharePercent: 50, jobConcurrency: 4 });
  });
  afterAll(async () => {
    await target.close();
    await t.close();
  });

  test("user A's 25 runs waiting on a slow upstream leave user B's run within 2x its idle latency + 100 ms, and all of A's runs complete", async () => {
    const a = await makeUser({ credits: 100 });
    const b = await makeUser({ credits: 100 });
    const slow = await makeRunnableCircuit(a, target.holdDefinition());
    const simple = await makeRunnableCircuit(b, {
      query_schema: { type: 'object' },
      steps: [{ id: 'hi', kind: 'template', template: 'hello' }],
    });
    const timedRun = async () => {
      const started = performance.now();
      const res = await submitRun(t, b.token, simple.adaptorUid, { input: {} }, { prefer: 'wait=30' });
      const elapsed = performance.now() - started;
      expect(res.body.payload.state).toBe('COMPLETED');
      return elapsed;
    };
    await timedRun();
    const idle: number[] = [];
    for (let i = 0; i < 7; i++) idle.push(await timedRun());

    const uids: string[] = [];
    for (let i = 0; i < 25; i++)
      uids.push((await submitRun(t, a.token, slow.adaptorUid, { input: {} })).body.payload.uid as string);
    // A holds its share of the worker (4 of 8); the other 21 wait PROVISIONED for a slot.
    await until("A's share held and the rest waiting", async () => {
      const [row] = await t.app.services.sequelize.query<{ n: string }>(
        `SELECT count(*) AS n FROM circuit_runs WHERE user_uid = $1 AND state = 'PROVISIONED' AND slot_wait`,
        { bind: [a.user.uid], type: 'SELECT' as never },
      );
      return target.held.length === 4 && Number(row.n) === 21;
    });

    const loaded: number[] = [];
    for (let i = 0; i < 7; i++) loaded.push(await timedRun());
    console.log(
      `B's run: idle median ${median(idle).toFixed(0)} ms, with A's 25 runs waiting ${median(loaded).toFixed(0)} ms`,
    );
    expect(median(loaded)).toBeLessThanOrEqual(2 * median(idle) + 100);

    // Nothing of A's is lost: as the held runs end, the waiting ones start, four at a time.
    await until(
      "all of A's runs completed",
      async () => {
        target.release();
        const states = await Promise.all(
          uids.map(
            async (uid) =>
              (await t.rest('GET', `/circuit-runs/${uid}`, { token: a.token })).body.payload.state as string,
          ),
        );
        return states.every((s) => s === 'COMPLETED');
      },
      60_000,
    );
    expect((await waitForRun(t, uids[24], a.token)).state).toBe('COMPLETED');
  });
});
