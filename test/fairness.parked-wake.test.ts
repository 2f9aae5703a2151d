import { QueryTypes } from 'sequelize';
import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import { makeRunnableCircuit, startHoldingTarget, submitRun, waitForRun } from './support/run-factories';

jest.setTimeout(180_000);

// One user's thousands of delayed starts coming due at once must not hold back another user's start that comes
// due with them: due starts join the runs waiting for a slot, which are queued interleaving users, instead of
// being queued in due-time order behind each other.
describe('parked runs of one user coming due together', () => {
  let t: TestApp;
  let target: Awaited<ReturnType<typeof startHoldingTarget>>;
  beforeAll(async () => {
    target = await startHoldingTarget();
    t = await startTestApp({ runMaxInflight: 8, runUserInflightSharePercent: 50, jobConcurrency: 4 });
  });
  afterAll(async () => {
    await target.close();
    await t.close();
  });

  test("user A's 3,000 due runs (on a slow upstream) leave user B's due run to complete at once; A holds only its share", async () => {
    const a = await makeUser({ credits: 10_000 });
    const b = await makeUser({ credits: 10 });
    const slow = await makeRunnableCircuit(a, target.holdDefinition());
    const simple = await makeRunnableCircuit(b, {
      query_schema: { type: 'object' },
      steps: [{ id: 'hi', kind: 'template', template: 'hello' }],
    });
    for (let batch = 0; batch < 3; batch++) {
      const res = await t.rest('POST', `/circuit-adaptors/${slow.adaptorUid}/batches`, {
        token: a.token,
        body: { inputs: Array.from({ length: 1000 }, () => ({})), delay_s: 3600 },
      });
      expect(res.status).toBe(200);
    }
    const late = await submitRun(t, b.token, simple.adaptorUid, { input: {}, delay_s: 3600 });
    const bUid = late.body.payload.uid as string;

    // All come due now, A's first (the sweep wakes by due time).
    const sequelize = t.app.services.sequelize;
    await sequelize.query(
      `UPDATE circuit_runs SET wake_at = now() - CASE WHEN user_uid = $1 THEN interval '1 minute' ELSE interval '0' END
        WHERE parked_at IS NOT NULL AND user_uid IN ($1, $2)`,
      { bind: [a.user.uid, b.user.uid] },
    );
    const done = await waitForRun(t, bUid, b.token);
    expect(done.state).toBe('COMPLETED');

    const states = await sequelize.query<{ state: string; n: number }>(
      `SELECT state, count(*)::int AS n FROM circuit_runs WHERE user_uid = $1 GROUP BY state`,
      { bind: [a.user.uid], type: QueryTypes.SELECT },
    );
    const count = Object.fromEntries(states.map((row) => [row.state, row.n]));
    // A's runs wait on the upstream: at most its share (4 of 8) RUNNING, none ended, the rest still PROVISIONED.
    expect(count.RUNNING ?? 0).toBeLessThanOrEqual(4);
    expect(count.COMPLETED ?? 0).toBe(0);
    expect(count.EXCEPTION ?? 0).toBe(0);
    expect((count.RUNNING ?? 0) + (count.PROVISIONED ?? 0)).toBe(3000);
  });
});
