import { useTestApp } from './support/app';
import { makeUser, HELLO_DEFINITION } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import { User } from '../src/models';
import { grantCredits } from '../src/credits/grants';
import type { CircuitDefinition } from '../src/domain/definition';

const t = useTestApp();

const FAILING: CircuitDefinition = {
  query_schema: { type: 'object' },
  steps: [{ id: 'boom', kind: 'transform', expression: '$error("boom")' }],
};

async function startAndWait(token: string, adaptorUid: string, input: Record<string, unknown>): Promise<any> {
  const res = await submitRun(t, token, adaptorUid, { input });
  expect(res.status).toBe(200);
  return waitForRun(t, res.body.payload.uid, token);
}

test('GET /users/circuit-runs lists the caller’s own runs in any state, newest first, filtered by state and circuit; GraphQL viewer.runs agrees', async () => {
  const owner = await makeUser();
  const caller = await makeUser({ credits: 20 });
  const stranger = await makeUser();
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const failing = await makeRunnableCircuit(owner, FAILING);
  const first = await startAndWait(caller.token, hello.adaptorUid, { name: 'a' });
  const failed = await startAndWait(caller.token, failing.adaptorUid, {});
  const last = await startAndWait(caller.token, hello.adaptorUid, { name: 'b' });
  await startAndWait(stranger.token, hello.adaptorUid, { name: 'not yours' });
  expect(failed.state).toBe('EXCEPTION');

  const all = await t.rest('GET', '/users/circuit-runs', { token: caller.token });
  expect(all.status).toBe(200);
  expect(all.body.meta).toEqual({ total_count: 3, limit: 10, page: 1 });
  expect(all.body.data.map((r: any) => r.uid)).toEqual([last.uid, failed.uid, first.uid]);
  expect(all.body.data[0]).toMatchObject({
    uid: last.uid,
    user_uid: caller.user.uid,
    circuit_uid: hello.circuit.uid,
    state: 'COMPLETED',
    is_public: false,
  });
  expect(all.body.data[1]).not.toHaveProperty('result_blob');
  // Failure details: `error` is absent, not null, on runs that did not fail — in lists as on the run itself.
  expect(all.body.data[0]).not.toHaveProperty('error');
  expect(all.body.data[1].error).toMatchObject({ code: 'StepFailed' });

  const onlyFailed = await t.rest('GET', '/users/circuit-runs?state=EXCEPTION', { token: caller.token });
  expect(onlyFailed.body.data.map((r: any) => r.uid)).toEqual([failed.uid]);
  const ofHello = await t.rest('GET', `/users/circuit-runs?circuit_uid=${hello.circuit.uid}&limit=1&page=2`, {
    token: caller.token,
  });
  expect(ofHello.body).toMatchObject({ meta: { total_count: 2, limit: 1, page: 2 }, data: [{ uid: first.uid }] });
  expect(
    (
      await t.rest('GET', `/users/circuit-runs?circuit_uid=${failing.circuit.uid}&state=COMPLETED`, {
        token: caller.token,
      })
    ).body.data,
  ).toEqual([]);

  const gql = await t.gql(
    `query($c: ID) { viewer { runs(state: EXCEPTION, circuitUid: $c) { totalCount items { uid state } } all: runs(limit: 2) { totalCount items { uid } } } }`,
    { c: failing.circuit.uid },
    caller.token,
  );
  expect(gql.data.viewer.runs).toEqual({ totalCount: 1, items: [{ uid: failed.uid, state: 'EXCEPTION' }] });
  expect(gql.data.viewer.all).toEqual({ totalCount: 3, items: [{ uid: last.uid }, { uid: failed.uid }] });
});

test('GET /users/circuit-runs and /users/credit-ledger need a token and check their parameters', async () => {
  const caller = await makeUser();
  for (const path of ['/users/circuit-runs', '/users/credit-ledger']) {
    const anonymous = await t.rest('GET', path);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe('Unauthorized');
    expect((await t.rest('GET', path, { token: 'cst_not-a-token' })).status).toBe(401);
    expect((await t.rest('GET', `${path}?limit=0`, { token: caller.token })).status).toBe(400);
    expect((await t.rest('GET', `${path}?page=x`, { token: caller.token })).status).toBe(400);
    expect((await t.rest('GET', `${path}?limit=1000`, { token: caller.token })).body.meta.limit).toBe(100);
  }
  const badState = await t.rest('GET', '/users/circuit-runs?state=DONE', { token: caller.token });
  expect(badState.status).toBe(400);
  expect(badState.body.error.code).toBe('BadClientData');
  const badCircuit = await t.rest('GET', '/users/circuit-runs?circuit_uid=nope', { token: caller.token });
  expect(badCircuit.status).toBe(400);
  expect(badCircuit.body.error).toEqual({ code: 'BadClientData', message: 'circuit_uid must be a uuid' });
  const badGql = await t.gql('{ viewer { runs(circuitUid: "nope") { totalCount } } }', {}, caller.token);
  expect(badGql.code).toBe('BadClientData');
  expect((await t.gql('{ viewer { runs { totalCount } } }')).data.viewer).toBeNull();
  expect((await t.gql('{ viewerCreditLedger { totalCount } }')).code).toBe('Unauthorized');
});

test('the ledger: grants and run charges, newest first; the sum of the new rows is the balance change and all rows sum to the balance', async () => {
  const owner = await makeUser();
  const caller = await makeUser({ credits: 4 });
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const before = (await User.findByPk(caller.user.uid))!.creditBalance;

  const one = await startAndWait(caller.token, hello.adaptorUid, { name: 'a' });
  await grantCredits(t.app.services.sequelize, { uid: caller.user.uid }, 7);
  const two = await startAndWait(caller.token, hello.adaptorUid, { name: 'b' });
  const after = (await User.findByPk(caller.user.uid))!.creditBalance;
  expect(after).toBe(before - 1 + 7 - 1);

  const ledger = await t.rest('GET', '/users/credit-ledger', { token: caller.token });
  expect(ledger.status).toBe(200);
  expect(ledger.body.meta).toEqual({ total_count: 4, limit: 10, page: 1 });
  expect(ledger.body.data.map((row: any) => [row.kind, row.amount, row.balance_after, row.run_uid])).toEqual([
    ['run', -1, 9, two.uid],
    ['grant', 7, 10, undefined],
    ['run', -1, 3, one.uid],
    ['grant', 4, 4, undefined],
  ]);
  expect(Object.keys(ledger.body.data[1]).sort()).toEqual(['amount', 'balance_after', 'created_at', 'kind', 'uid']);
  const newRows = ledger.body.data.slice(0, 3);
  expect(newRows.reduce((sum: number, row: any) => sum + row.amount, 0)).toBe(after - before);
  expect(ledger.body.data.reduce((sum: number, row: any) => sum + row.amount, 0)).toBe(after);

  const paged = await t.rest('GET', '/users/credit-ledger?limit=3&page=2', { token: caller.token });
  expect(paged.body).toMatchObject({
    meta: { total_count: 4, limit: 3, page: 2 },
    data: [{ kind: 'grant', amount: 4 }],
  });

  const gql = await t.gql(
    '{ viewer { credits creditsHeld creditLedger(limit: 2) { totalCount items { kind runUid amount balanceAfter } } } }',
    {},
    caller.token,
  );
  expect(gql.data.viewer).toEqual({
    credits: after,
    creditsHeld: 0,
    creditLedger: {
      totalCount: 4,
      items: [
        { kind: 'run', runUid: two.uid, amount: -1, balanceAfter: 9 },
        { kind: 'grant', runUid: null, amount: 7, balanceAfter: 10 },
      ],
    },
  });
  // Nobody else's rows.
  expect(
    (await t.rest('GET', '/users/credit-ledger', { token: owner.token })).body.data.every(
      (row: any) => row.kind === 'grant',
    ),
  ).toBe(true);
});
