import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';

jest.setTimeout(180_000);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

describe('the sandbox pool is shared fairly between users', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  test("user A's 5 runs of 100 transform steps leave user B's walk-through run within 2x its idle latency + 100 ms", async () => {
    const a = await makeUser({ credits: 100 });
    const b = await makeUser({ credits: 100 });
    // 100 independent steps, each a few tens of ms of JSONata in an isolate: all queue for the pool at once.
    const heavy = await makeRunnableCircuit(a, {
      query_schema: { type: 'object' },
      steps: Array.from({ length: 100 }, (_, i) => ({
        id: `t${i}`,
        kind: 'transform',
        expression: `$count([1..5000][$ % ${i + 2} = 0])`,
      })),
    });
    const walkThrough = await makeRunnableCircuit(b, HELLO_DEFINITION);
    const timedRun = async () => {
      const started = performance.now();
      const res = await submitRun(t, b.token, walkThrough.adaptorUid, { input: { name: 'b' } }, { prefer: 'wait=60' });
      const elapsed = performance.now() - started;
      expect(res.body.payload.state).toBe('COMPLETED');
      expect(res.body.payload.result_blob.output).toBe('HELLO B');
      return elapsed;
    };
    await timedRun();
    const idle: number[] = [];
    for (let i = 0; i < 7; i++) idle.push(await timedRun());

    const uids: string[] = [];
    for (let i = 0; i < 5; i++)
      uids.push((await submitRun(t, a.token, heavy.adaptorUid, { input: {} })).body.payload.uid as string);
    // Positive signal that A's steps are in the pool: a step of each run has finished.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const [row] = await t.app.services.sequelize.query<{ n: string }>(
        `SELECT count(DISTINCT run_uid) AS n FROM circuit_run_events WHERE run_uid = ANY($1::uuid[]) AND kind = 'step'`,
        { bind: [uids], type: 'SELECT' as never },
      );
      if (Number(row.n) === 5 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const loaded: number[] = [];
    for (let i = 0; i < 7; i++) loaded.push(await timedRun());
    const stillBusy = (
      await Promise.all(
        uids.map(async (uid) => (await t.rest('GET', `/circuit-runs/${uid}`, { token: a.token })).body.payload.state),
      )
    ).filter((s) => s === 'RUNNING').length;
    console.log(
      `B's walk-through run: idle median ${median(idle).toFixed(0)} ms, with A's 500 transform steps queued ${median(loaded).toFixed(0)} ms (A's runs still running after: ${stillBusy})`,
    );
    expect(stillBusy).toBeGreaterThan(0);
    expect(median(loaded)).toBeLessThanOrEqual(2 * median(idle) + 100);
    for (const uid of uids) {
      const run = await waitForRun(t, uid, a.token, 120_000);
      expect({ state: run.state, error: run.error ?? null }).toEqual({ state: 'COMPLETED', error: null });
    }
  });
});
