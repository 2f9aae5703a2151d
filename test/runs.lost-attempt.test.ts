import { QueryTypes } from 'sequelize';
import { startTestApp, type TestApp } from './support/app';
import { makeUser } from './support/factories';
import { makeRunnableCircuit, startHoldingTarget, submitRun, waitForRun } from './support/run-factories';
import { until } from './support/wait';

/**
 * An attempt whose heartbeat no longer finds its run held (the row given up under it: turned away for a slot,
 * parked, given back) stops and ends nothing, even though the row still carries its attempt number: the run goes
 * on in the next attempt. Here the row is given up by hand, as the statement that turns a resumed run away for a
 * full slot gives it up, before the attempt has heard of it; the worker's heartbeat (every 375 ms here) is the
 * first to learn of it.
 */

jest.setTimeout(60_000);

let t: TestApp;
let target: Awaited<ReturnType<typeof startHoldingTarget>>;
beforeAll(async () => {
  target = await startHoldingTarget();
  t = await startTestApp();
});
afterAll(async () => {
  await target.close();
  await t.close();
});

test('an attempt whose row was given up under it stops without ending the run; the next attempt completes it', async () => {
  const owner = await makeUser({ credits: 100 });
  const { adaptorUid } = await makeRunnableCircuit(owner, target.holdDefinition());
  const res = await submitRun(t, owner.token, adaptorUid, { input: {} });
  expect(res.status).toBe(200);
  const uid = res.body.payload.uid as string;
  await target.untilHeld(1);
  let firstClosed = false;
  target.held[0].on('close', () => (firstClosed = true));

  await t.app.services.sequelize.query(
    `UPDATE circuit_runs SET heartbeat_at = NULL, worker_backend_pid = NULL, handed_back = handed_back + 1
      WHERE uid = $1 AND attempt = 1 AND state = 'RUNNING'`,
    { bind: [uid] },
  );
  // The first attempt learns from its heartbeat that the row is no longer its own, and stops (its call is dropped).
  await until("the first attempt's call to be dropped", () => firstClosed, 20_000);
  const [row] = await t.app.services.sequelize.query<{ state: string; attempt: number }>(
    'SELECT state, attempt FROM circuit_runs WHERE uid = $1',
    { bind: [uid], type: QueryTypes.SELECT },
  );
  expect(row.state).toBe('RUNNING');

  // The sweep takes the unheld run over: a second attempt calls again, and completes the run once released.
  await until('a second attempt to call', () => target.held.length === 2, 30_000);
  target.release();
  const run = await waitForRun(t, uid, owner.token);
  expect(run.state).toBe('COMPLETED');
  const [after] = await t.app.services.sequelize.query<{ attempt: number }>(
    'SELECT attempt FROM circuit_runs WHERE uid = $1',
    { bind: [uid], type: QueryTypes.SELECT },
  );
  expect(after.attempt).toBe(2);
});
