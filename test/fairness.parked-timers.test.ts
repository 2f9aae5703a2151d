import { QueryTypes } from 'sequelize';
import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import { makeRunnableCircuit, startHoldingTarget, submitRun, waitForRun } from './support/run-factories';

jest.setTimeout(300_000);

// One user's many parked time waits coming due at once must not hold back another user's timer that comes due
// with them: runs resuming from a timer join the runs waiting for a slot, which are woken interleaving users,
// instead of being queued in due-time order behind each other.
describe('parked timers of one user coming due together', () => {
  let t: TestApp;
  let target: Awaited<ReturnType<typeof startHoldingTarget>>;
  beforeAll(async () => {
    target = await startHoldingTarget();
    t = await startTestApp({
      runMaxInflight: 8,
      runUserInflightSharePercent: 50,
      jobConcurrency: 4,
      runParkAfterSeconds: 0,
    });
  });
  afterAll(async () => {
    await target.close();
    await t.close();
  });

  test("user A's 1,000 due timers (then a slow upstream) leave user B's due timer to complete at once", async () => {
    const a = await makeUser({ credits: 10_000 });
    const b = await makeUser({ credits: 10 });
    const slow = await makeRunnableCircuit(a, {
      query_schema: { type: 'object' },
      steps: [
        { id: 'nap', kind: 'wait', for: 'time', duration_s: 3600 },
        // After the wait (it reads its output), on the slow upstream.
        { id: 'call', kind: 'http', method: 'GET', url: `${target.url}/hold?after={{steps.nap.output.waited_s}}` },
      ],
    });
    const simple = await makeRunnableCircuit(b, {
      query_schema: { type: 'object' },
      steps: [
        { id: 'nap', kind: 'wait', for: 'time', duration_s: 3600 },
        { id: 'hi', kind: 'template', template: 'hello after {{steps.nap.output.waited_s}} s' },
      ],
    });
    const res = await t.rest('POST', `/circuit-adaptors/${slow.adaptorUid}/batches`, {
      token: a.token,
      body: { inputs: Array.from({ length: 1000 }, () => ({})) },
    });
    expect(res.status).toBe(200);
    const late = await submitRun(t, b.token, simple.adaptorUid, { input: {} });
    const bUid = late.body.payload.uid as string;

    const sequelize = t.app.services.sequelize;
    const parked = async () =>
      (
        await sequelize.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM circuit_runs WHERE parked_at IS NOT NULL AND user_uid IN ($1, $2)`,
          { bind: [a.user.uid, b.user.uid], type: QueryTypes.SELECT },
        )
      )[0].n;
    const deadline = Date.now() + 240_000;
    while ((await parked()) < 1001) {
      if (Date.now() > deadline) throw new Error(`only ${await parked()} of 1001 runs parked`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    // Every timer comes due now, A's first (the sweep wakes by due time).
    await sequelize.query(
      `WITH due AS (
         UPDATE circuit_runs SET wake_at = now() - CASE WHEN user_uid = $1 THEN interval '1 minute' ELSE interval '0' END
          WHERE parked_at IS NOT NULL AND user_uid IN ($1, $2) RETURNING uid)
       UPDATE circuit_run_steps SET expires_at = now() - interval '1 second' WHERE run_uid IN (SELECT uid FROM due) AND path = 'nap'`,
      { bind: [a.user.uid, b.user.uid] },
    );
    const done = await waitForRun(t, bUid, b.token);
    expect(done.state).toBe('COMPLETED');

    const states = await sequelize.query<{ state: string; n: number }>(
      `SELECT state, count(*)::int AS n FROM circuit_runs WHERE user_uid = $1 AND paused_at IS NULL GROUP BY state`,
      { bind: [a.user.uid], type: QueryTypes.SELECT },
    );
    const count = Object.fromEntries(states.map((row) => [row.state, row.n]));
    // A's resumed runs wait on the upstream: at most its share (4 of 8) running, none ended.
    expect(count.RUNNING ?? 0).toBeLessThanOrEqual(4);
    expect(count.COMPLETED ?? 0).toBe(0);
    expect(count.EXCEPTION ?? 0).toBe(0);
  });
});
