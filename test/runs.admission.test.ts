import crypto from 'node:crypto';
import { startTestApp, TestApp } from './support/app';
import { makeUser, HELLO_DEFINITION } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import { User } from '../src/models';
import { CircuitRun } from '../src/models/CircuitRun';
import { CreditLedger } from '../src/models/CreditLedger';
import { RunAdmission, type RunFields } from '../src/runs/admission';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

async function settled(userUid: string) {
  const deadline = Date.now() + 20_000;
  while ((await CircuitRun.count({ where: { user_uid: userUid, state: ['PROVISIONED', 'RUNNING'] } })) > 0) {
    if (Date.now() > deadline) throw new Error('runs still in flight');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const user = (await User.findByPk(userUid))!;
  const ledger = await CreditLedger.findAll({ where: { user_uid: userUid, kind: 'run' } });
  return {
    credits: user.creditBalance,
    held: Number(user.credits_held),
    charged: ledger.reduce((sum, row) => sum - Number(row.amount), 0),
  };
}

test("a burst of one user's queries is admitted in batches: exactly the balance's worth of runs, each with its own input, each run once", async () => {
  const owner = await makeUser();
  const caller = await makeUser({ credits: 25 });
  const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const answers = await Promise.all(
    Array.from({ length: 60 }, (_, i) => submitRun(t, caller.token, adaptorUid, { input: { name: `n${i}` } })),
  );
  const admitted = answers.filter((a) => a.status === 200);
  expect(admitted).toHaveLength(25);
  expect(answers.filter((a) => a.status === 402)).toHaveLength(35);
  expect(new Set(admitted.map((a) => a.body.payload.uid)).size).toBe(25);

  // Each answer is its own query's run, not a neighbour's from the same batch.
  const names = answers
    .map((a, i) => (a.status === 200 ? { uid: a.body.payload.uid, name: `n${i}` } : null))
    .filter((x) => x !== null);
  for (const { uid, name } of names) {
    const run = await waitForRun(t, uid, caller.token);
    expect(run).toMatchObject({ state: 'COMPLETED', result_blob: { output: `HELLO ${name.toUpperCase()}` } });
  }
  expect(await settled(caller.user.uid)).toEqual({ credits: 0, held: 0, charged: 25 });
});

test("queries of different users are not held back by each other's batches", async () => {
  const owner = await makeUser();
  const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const callers = await Promise.all([makeUser({ credits: 5 }), makeUser({ credits: 5 })]);
  const answers = await Promise.all(
    callers.flatMap((c) =>
      Array.from({ length: 8 }, () => submitRun(t, c.token, adaptorUid, { input: { name: 'x' } })),
    ),
  );
  expect(answers.slice(0, 8).filter((a) => a.status === 200)).toHaveLength(5);
  expect(answers.slice(8).filter((a) => a.status === 200)).toHaveLength(5);
  for (const c of callers) expect(await settled(c.user.uid)).toEqual({ credits: 0, held: 0, charged: 5 });
});

/** What createRun hands the admission for a private run of `caller` without webhook. */
function runFields(
  caller: { user: { uid: string } },
  circuitUid: string,
  versionUid: string,
  input: Record<string, unknown>,
): RunFields {
  return {
    user_uid: caller.user.uid,
    circuit_uid: circuitUid,
    circuit_version_uid: versionUid,
    input,
    is_public: false,
    webhook_url: null,
    webhook_events: null,
    deadline_s: 60,
  };
}

test('one query that cannot be written fails alone: the others of its batch are admitted', async () => {
  const owner = await makeUser();
  const caller = await makeUser({ credits: 10 });
  const { circuit, version } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const admission = new RunAdmission({ sequelize: t.app.services.sequelize, runQueue: t.app.runtime.queue });
  const fields = (versionUid: string) => runFields(caller, circuit.uid, versionUid, { name: 'x' });
  // Queued behind the first, the next three go as one statement; the unknown version breaks it.
  const results = await Promise.allSettled(
    [fields(version.uid), fields(version.uid), fields(crypto.randomUUID()), fields(version.uid)].map((f) =>
      admission.admit(f),
    ),
  );
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
  expect(await settled(caller.user.uid)).toEqual({ credits: 7, held: 0, charged: 3 });
});

test('a burst of large inputs is split across statements by size, and every query is admitted with its own input', async () => {
  const owner = await makeUser();
  const caller = await makeUser({ credits: 20 });
  const { circuit, version } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const admission = new RunAdmission({ sequelize: t.app.services.sequelize, runQueue: t.app.runtime.queue });
  const big = (i: number) => runFields(caller, circuit.uid, version.uid, { name: `${i}`.padEnd(600_000, 'x') });
  // 12 × 600 kB: more than one statement's 4 MiB.
  const admitted = await Promise.all(Array.from({ length: 12 }, (_, i) => admission.admit(big(i))));
  expect(admitted.every((a) => a !== null)).toBe(true);
  const names = await Promise.all(
    admitted.map(async (a) =>
      ((await CircuitRun.findByPk(a!.run.uid))!.input as { name: string }).name.replace(/x+$/, ''),
    ),
  );
  expect(names).toEqual(Array.from({ length: 12 }, (_, i) => `${i}`));
  expect(await settled(caller.user.uid)).toEqual({ credits: 8, held: 0, charged: 12 });
});
