import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import { makeRunnableCircuit, startHoldingTarget, submitRun, waitForRun } from './support/run-factories';
import { CircuitRun } from '../src/models/CircuitRun';

// Claims commit asynchronously (src/db/async-commit.ts): a crash of PostgreSQL can roll one back while
// its worker goes on executing. Here the rollback is made by hand while the run waits in a step.
let t: TestApp;
let target: Awaited<ReturnType<typeof startHoldingTarget>>;
beforeAll(async () => {
  t = await startTestApp({ jobLockLifetimeMs: 60_000 });
  target = await startHoldingTarget();
});
afterAll(async () => {
  await target.close();
  await t.close();
});

test('a run whose claim was rolled back under its worker is claimed and executed again at once, and charged once', async () => {
  const owner = await makeUser({ credits: 10 });
  const { adaptorUid } = await makeRunnableCircuit(owner, target.holdDefinition());
  const { body } = await submitRun(t, owner.token, adaptorUid, { input: {} });
  const uid = body.payload.uid as string;
  await target.untilHeld();
  // As if PostgreSQL had lost the claim: the run is PROVISIONED again, attempt 0.
  await CircuitRun.update(
    { state: 'PROVISIONED', attempt: 0, started_at: null, heartbeat_at: null },
    { where: { uid }, hooks: false },
  );
  target.release('{"call":1}');
  // The first execution's end is refused; the same job claims the run anew and calls the step again.
  await target.untilHeld();
  target.release('{"call":2}');
  const run = await waitForRun(t, uid, owner.token);
  expect(run).toMatchObject({ state: 'COMPLETED', result_blob: { output: { call: 2 } } });
  expect(
    (
      await t.gql<{ viewer: { credits: number; creditsHeld: number } }>(
        '{ viewer { credits creditsHeld } }',
        {},
        owner.token,
      )
    ).data?.viewer,
  ).toEqual({ credits: 9, creditsHeld: 0 });
});
