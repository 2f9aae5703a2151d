import { useTestApp } from './support/app';
import { makeUser, HELLO_DEFINITION } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import { User } from '../src/models';

const t = useTestApp();

test('an Idempotency-Key replay answers the first answer (PROVISIONED), not the run as it is now, and charges nothing more', async () => {
  const owner = await makeUser();
  const caller = await makeUser({ credits: 2 });
  const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const key = { 'Idempotency-Key': `replay-${Date.now()}` };
  const first = await submitRun(t, caller.token, adaptorUid, { input: { name: 'x' } }, key);
  expect(first.status).toBe(200);
  expect(first.body.payload.state).toBe('PROVISIONED');
  const done = await waitForRun(t, first.body.payload.uid, caller.token);
  expect(done.state).toBe('COMPLETED');

  const again = await submitRun(t, caller.token, adaptorUid, { input: { name: 'x' } }, key);
  expect(again.status).toBe(200);
  expect(again.body).toEqual(first.body);

  const gql = await t.gql(
    'mutation($a: ID!, $k: String) { queryCircuitAdaptor(adaptorUid: $a, input: {name: "x"}, idempotencyKey: $k) { uid state endedAt resultBlob } }',
    { a: adaptorUid, k: key['Idempotency-Key'] },
    caller.token,
  );
  expect(gql.data.queryCircuitAdaptor).toEqual({
    uid: first.body.payload.uid,
    state: 'PROVISIONED',
    endedAt: null,
    resultBlob: null,
  });

  // Replays start nothing and hold nothing: one run, one credit.
  const user = (await User.findByPk(caller.user.uid))!;
  expect([user.creditBalance, Number(user.credits_held)]).toEqual([1, 0]);
});

test('a replay is answered even when the balance could not start a new run', async () => {
  const owner = await makeUser();
  const caller = await makeUser({ credits: 1 });
  const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const key = { 'Idempotency-Key': `broke-${Date.now()}` };
  const first = await submitRun(t, caller.token, adaptorUid, { input: { name: 'x' } }, key);
  await waitForRun(t, first.body.payload.uid, caller.token);
  const again = await submitRun(t, caller.token, adaptorUid, { input: { name: 'x' } }, key);
  expect(again.status).toBe(200);
  expect(again.body.payload).toEqual({ uid: first.body.payload.uid, state: 'PROVISIONED', is_public: false });
  expect((await submitRun(t, caller.token, adaptorUid, { input: { name: 'y' } })).status).toBe(402);
});
