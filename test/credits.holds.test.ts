import { startTestApp, TestApp } from './support/app';
import { makeUser, HELLO_DEFINITION } from './support/factories';
import { makeRunnableCircuit, startHoldingTarget, submitRun, waitForRun } from './support/run-factories';
import { User } from '../src/models';
import { CircuitRun } from '../src/models/CircuitRun';
import { CreditLedger } from '../src/models/CreditLedger';
import { holdCredits } from '../src/credits/holds';

let t: TestApp;
let target: Awaited<ReturnType<typeof startHoldingTarget>>;
beforeAll(async () => {
  // Aliased queries soon cost more than GRAPHQL_MAX_COST (test/edges.graphql-protocol); the bound is lifted
  // here so that the holds are what stops them.
  t = await startTestApp({ graphqlMaxCost: 1_000_000 });
  target = await startHoldingTarget();
});
afterAll(async () => {
  await target.close();
  await t.close();
});

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function books(userUid: string) {
  const user = (await User.findByPk(userUid))!;
  const ledger = await CreditLedger.findAll({ where: { user_uid: userUid } });
  return {
    credits: user.creditBalance,
    held: Number(user.credits_held),
    ledgerSum: ledger.reduce((sum, row) => sum + Number(row.amount), 0),
    charged: ledger.filter((row) => row.kind === 'run').reduce((sum, row) => sum - Number(row.amount), 0),
  };
}

async function settled(userUid: string) {
  await until(
    async () => (await CircuitRun.count({ where: { user_uid: userUid, state: ['PROVISIONED', 'RUNNING'] } })) === 0,
    20_000,
  );
  return books(userUid);
}

test.each([1, 3])(
  '10 aliased queries (the most one selection may repeat a field) in one GraphQL request with %i credit(s) start exactly that many runs; the next is InsufficientCredits',
  async (credits) => {
    const owner = await makeUser();
    const caller = await makeUser({ credits });
    const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const fields = Array.from(
      { length: 10 },
      (_, i) => `a${i}: queryCircuitAdaptor(adaptorUid: $adaptor, input: {name: "x"}) { uid state }`,
    );
    const res = await t.gql(
      `mutation Many($adaptor: ID!) { ${fields.join('\n')} }`,
      { adaptor: adaptorUid },
      caller.token,
    );
    // Mutation fields run one after another and are non-null: the first refusal ends the request.
    expect(res.data).toBeNull();
    expect(res.errors).toEqual([
      expect.objectContaining({ path: [`a${credits}`], extensions: { code: 'InsufficientCredits' } }),
    ]);
    expect(await CircuitRun.count({ where: { user_uid: caller.user.uid } })).toBe(credits);

    expect(await settled(caller.user.uid)).toEqual({ credits: 0, held: 0, ledgerSum: 0, charged: credits });
  },
);

test('concurrent REST queries never start more runs than the balance covers', async () => {
  const owner = await makeUser();
  const caller = await makeUser({ credits: 3 });
  const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const answers = await Promise.all(
    Array.from({ length: 40 }, () => submitRun(t, caller.token, adaptorUid, { input: { name: 'x' } })),
  );
  const statuses = answers.map((a) => a.status);
  expect(statuses.filter((s) => s === 200)).toHaveLength(3);
  expect(statuses.filter((s) => s === 402)).toHaveLength(37);
  const refused = answers.find((a) => a.status === 402)!;
  expect(refused.body.error).toEqual({
    code: 'InsufficientCredits',
    message: expect.stringMatching(/^A run needs 1 credit; your balance is \d/),
  });

  expect(await settled(caller.user.uid)).toEqual({ credits: 0, held: 0, ledgerSum: 0, charged: 3 });
  expect((await submitRun(t, caller.token, adaptorUid, { input: { name: 'x' } })).status).toBe(402);
});

test('a run in flight holds its base credit: the balance it holds cannot start another run', async () => {
  const owner = await makeUser();
  const caller = await makeUser({ credits: 1 });
  const slow = target.holdDefinition();
  const { adaptorUid } = await makeRunnableCircuit(owner, slow);
  const first = await submitRun(t, caller.token, adaptorUid, { input: {} });
  expect(first.status).toBe(200);
  expect(await books(caller.user.uid)).toMatchObject({ credits: 1, held: 1 });
  expect((await submitRun(t, caller.token, adaptorUid, { input: {} })).status).toBe(402);
  await target.untilHeld();
  target.release();
  await waitForRun(t, first.body.payload.uid, caller.token);
  expect(await settled(caller.user.uid)).toEqual({ credits: 0, held: 0, ledgerSum: 0, charged: 1 });
});

test('holdCredits reserves only what is not held, only for a RUNNING run; the end releases every hold and charges the cost', async () => {
  const owner = await makeUser();
  const caller = await makeUser({ credits: 5 });
  const slow = target.holdDefinition();
  const { adaptorUid } = await makeRunnableCircuit(owner, slow);
  const submitted = await submitRun(t, caller.token, adaptorUid, { input: {} });
  const run = { uid: submitted.body.payload.uid as string, userUid: caller.user.uid };
  await target.untilHeld();

  const sequelize = t.app.services.sequelize;
  expect(await holdCredits(sequelize, run, 3)).toBe(true); // 1 (base) + 3 of 5
  expect(await holdCredits(sequelize, run, 2)).toBe(false);
  expect(await holdCredits(sequelize, run, 1)).toBe(true); // all 5 held
  expect(await holdCredits(sequelize, { ...run, userUid: owner.user.uid }, 1)).toBe(false); // not the run's user
  expect(await holdCredits(sequelize, run, 0)).toBe(true);
  await expect(holdCredits(sequelize, run, -1)).rejects.toThrow(RangeError);
  expect(await books(caller.user.uid)).toMatchObject({ credits: 5, held: 5 });
  const [{ credits_held: runHeld }] = await sequelize.query<{ credits_held: string }>(
    'SELECT credits_held FROM circuit_runs WHERE uid = $1',
    { bind: [run.uid], type: 'SELECT' as never },
  );
  expect(Number(runHeld)).toBe(5);

  // Concurrent holds on a full balance: none succeeds, nothing is over-held.
  expect(
    (await Promise.all(Array.from({ length: 10 }, () => holdCredits(sequelize, run, 1)))).filter(Boolean),
  ).toHaveLength(0);

  target.release();
  await waitForRun(t, run.uid, caller.token);
  // The run cost 1 (its http step is free): the hold is released and 1 is charged.
  expect(await settled(caller.user.uid)).toEqual({ credits: 4, held: 0, ledgerSum: 4, charged: 1 });
  expect(await holdCredits(sequelize, run, 1)).toBe(false); // ended runs hold nothing
});

test('concurrent holds of two runs of one user never reserve more than the balance', async () => {
  const owner = await makeUser();
  const caller = await makeUser({ credits: 12 });
  const slow = target.holdDefinition();
  const { adaptorUid } = await makeRunnableCircuit(owner, slow);
  const uids = await Promise.all(
    [1, 2].map(async () => (await submitRun(t, caller.token, adaptorUid, { input: {} })).body.payload.uid as string),
  );
  await target.untilHeld(2);
  const sequelize = t.app.services.sequelize;
  const attempts = await Promise.all(
    Array.from({ length: 30 }, (_, i) => holdCredits(sequelize, { uid: uids[i % 2], userUid: caller.user.uid }, 1)),
  );
  expect(attempts.filter(Boolean)).toHaveLength(10); // 12 - 2 base credits
  expect(await books(caller.user.uid)).toMatchObject({ credits: 12, held: 12 });
  target.release();
  expect(await settled(caller.user.uid)).toEqual({ credits: 10, held: 0, ledgerSum: 10, charged: 2 });
});
