import { QueryTypes } from 'sequelize';
import { startTestApp, type TestApp } from './support/app';
import { makeUser, type TestUser } from './support/factories';
import { makeRunnableCircuit } from './support/run-factories';
import {
  claimRun,
  createClaimBatcher,
  createRunEnds,
  endRunTogether,
  finishRun,
  type ClaimedRun,
  type RunEnding,
} from '../src/runs/transitions';

/**
 * The ends of one user's runs that arrive together are written in one statement (RunService.runEnds): the user's
 * row is locked once for all of them instead of each end queueing behind the last for it. Each run is still
 * charged exactly as an end of its own would charge it, from the balance the previous one left — also when the
 * balance runs short and a charge is capped.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ runWorker: false, runRateLimitPerMinute: 0 });
});
afterAll(async () => {
  await t.close();
});

const query = <T extends object>(sql: string, bind: unknown[] = []) =>
  t.app.services.sequelize.query<T>(sql, { bind, type: QueryTypes.SELECT });

/** `count` runs of `owner` admitted in one batch and claimed, in the order they were admitted. */
async function claimedRuns(owner: TestUser, count: number): Promise<ClaimedRun[]> {
  const { adaptorUid } = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'a', kind: 'template', template: 'x' }],
  });
  const res = await t.rest('POST', `/circuit-adaptors/${adaptorUid}/batches`, {
    token: owner.token,
    body: { inputs: Array.from({ length: count }, () => ({})) },
  });
  expect(res.status).toBe(200);
  const runs = await query<{ uid: string }>(
    `SELECT uid FROM circuit_runs WHERE user_uid = $1 ORDER BY created_at, uid`,
    [owner.user.uid],
  );
  const batcher = createClaimBatcher(t.app.services.sequelize);
  const claims: ClaimedRun[] = [];
  for (const run of runs) claims.push((await claimRun(batcher, run.uid, 60_000))!);
  return claims;
}

const ending = (claim: ClaimedRun, cost: number): RunEnding => ({
  uid: claim.uid,
  attempt: claim.attempt,
  state: 'COMPLETED',
  resultBlob: { cost },
  cost,
  events: [{ kind: 'output', data: { value: cost } }],
});

async function ledgerOf(owner: TestUser) {
  return query<{ amount: string; balance_after: string; cost: string; tx: string }>(
    `SELECT amount, balance_after, cost, xmin::text AS tx FROM credit_ledger WHERE user_uid = $1 AND kind = 'run' ORDER BY seq`,
    [owner.user.uid],
  );
}

async function balanceOf(owner: TestUser) {
  const [row] = await query<{ credits: string; credits_held: string }>(
    `SELECT credits, credits_held FROM users WHERE uid = $1`,
    [owner.user.uid],
  );
  return row;
}

test('ends of one user arriving together share statements, and charge each run as ends one by one would, a short balance included', async () => {
  // Costs over what each run held, on a balance that runs out part-way: the later charges are capped.
  const costs = [4, 1, 6, 3, 5, 2, 7, 1, 4, 3, 2, 6];
  const alone = await makeUser({ credits: 30 });
  const together = await makeUser({ credits: 30 });
  const aloneRuns = await claimedRuns(alone, costs.length);
  const togetherRuns = await claimedRuns(together, costs.length);
  expect(await balanceOf(together)).toEqual(await balanceOf(alone));

  for (const [i, claim] of aloneRuns.entries()) await finishRun(t.app.services.sequelize, ending(claim, costs[i]));
  const ends = createRunEnds(t.app.services.sequelize);
  const charges = await Promise.all(
    togetherRuns.map((claim, i) => endRunTogether(ends, ending(claim, costs[i]), together.user.uid)),
  );

  const aloneLedger = await ledgerOf(alone);
  const togetherLedger = await ledgerOf(together);
  const figures = (rows: typeof aloneLedger) =>
    rows.map(({ amount, balance_after, cost }) => ({ amount, balance_after, cost }));
  expect(figures(togetherLedger)).toEqual(figures(aloneLedger));
  expect(await balanceOf(together)).toEqual(await balanceOf(alone));
  expect(charges.map((charge) => charge?.amount)).toEqual(aloneLedger.map((row) => -Number(row.amount)));
  // The balance did run short: some run paid less than its cost.
  expect(aloneLedger.some((row) => -Number(row.amount) < Number(row.cost))).toBe(true);
  // The first end went alone (nothing was in flight); the others waited for it and went together.
  expect(new Set(togetherLedger.map((row) => row.tx)).size).toBe(2);
  expect(new Set(aloneLedger.map((row) => row.tx)).size).toBe(costs.length);

  // Each run ended with its events, then its terminal state event, numbered in order.
  const events = await query<{ run_uid: string; seqs: number[]; kinds: string[] }>(
    `SELECT run_uid, array_agg(seq ORDER BY seq) AS seqs, array_agg(kind ORDER BY seq) AS kinds
       FROM circuit_run_events WHERE run_uid = ANY($1::uuid[]) GROUP BY run_uid`,
    [togetherRuns.map((run) => run.uid)],
  );
  expect(events).toHaveLength(costs.length);
  for (const run of events) {
    expect(run.kinds.slice(-2)).toEqual(['output', 'state']);
    expect(run.seqs).toEqual(run.seqs.map((_, i) => run.seqs[0] + i));
  }
});

test('an end that is not its attempt’s is refused in a shared statement as alone, without touching the others', async () => {
  const owner = await makeUser({ credits: 100 });
  const runs = await claimedRuns(owner, 4);
  const ends = createRunEnds(t.app.services.sequelize);
  const answers = await Promise.all([
    endRunTogether(ends, ending(runs[0], 1), owner.user.uid),
    endRunTogether(ends, { ...ending(runs[1], 2), attempt: runs[1].attempt + 1 }, owner.user.uid),
    endRunTogether(ends, ending(runs[2], 3), owner.user.uid),
    endRunTogether(ends, ending(runs[3], 4), owner.user.uid),
  ]);
  expect(answers.map((charge) => charge?.amount ?? null)).toEqual([1, null, 3, 4]);
  const states = await query<{ uid: string; state: string }>(
    `SELECT uid, state FROM circuit_runs WHERE uid = ANY($1::uuid[])`,
    [runs.map((run) => run.uid)],
  );
  expect(Object.fromEntries(states.map((row) => [row.uid, row.state]))).toEqual({
    [runs[0].uid]: 'COMPLETED',
    [runs[1].uid]: 'RUNNING',
    [runs[2].uid]: 'COMPLETED',
    [runs[3].uid]: 'COMPLETED',
  });
  // Ended again by its own attempt later: still exactly once.
  expect((await endRunTogether(ends, ending(runs[1], 2), owner.user.uid))?.amount).toBe(2);
  expect(await endRunTogether(ends, ending(runs[1], 2), owner.user.uid)).toBeNull();
  expect(await ledgerOf(owner)).toHaveLength(4);
});

test('a large result goes in a statement of its own, and an end PostgreSQL refuses fails alone, the others charged', async () => {
  const owner = await makeUser({ credits: 100 });
  const runs = await claimedRuns(owner, 5);
  const ends = createRunEnds(t.app.services.sequelize);
  const large = (claim: ClaimedRun, letter: string): RunEnding => ({
    ...ending(claim, 1),
    resultBlob: { text: letter.repeat(700 * 1024) },
  });
  // The first goes at once; the other four wait for it: the two of 700 KiB cannot share a statement (1 MiB at
  // most), and the NUL that jsonb refuses fails only its own end when its statement is retried end by end.
  const answers = await Promise.allSettled([
    endRunTogether(ends, ending(runs[0], 1), owner.user.uid),
    endRunTogether(ends, large(runs[1], 'a'), owner.user.uid),
    endRunTogether(ends, large(runs[2], 'b'), owner.user.uid),
    endRunTogether(ends, { ...ending(runs[3], 1), resultBlob: { text: 'nul \u0000 here' } }, owner.user.uid),
    endRunTogether(ends, ending(runs[4], 1), owner.user.uid),
  ]);
  expect(answers.map((answer) => answer.status)).toEqual([
    'fulfilled',
    'fulfilled',
    'fulfilled',
    'rejected',
    'fulfilled',
  ]);
  const rows = await query<{ uid: string; state: string; bytes: number | null }>(
    `SELECT uid, state, octet_length(result_blob->>'text') AS bytes FROM circuit_runs WHERE uid = ANY($1::uuid[])`,
    [runs.map((run) => run.uid)],
  );
  const byUid = new Map(rows.map((row) => [row.uid, row]));
  expect(runs.map((run) => byUid.get(run.uid)?.state)).toEqual([
    'COMPLETED',
    'COMPLETED',
    'COMPLETED',
    'RUNNING',
    'COMPLETED',
  ]);
  expect(byUid.get(runs[1].uid)?.bytes).toBe(700 * 1024);
  expect(byUid.get(runs[2].uid)?.bytes).toBe(700 * 1024);
  const tx = new Map(
    (
      await query<{ run_uid: string; tx: string }>(
        `SELECT run_uid, xmin::text AS tx FROM credit_ledger WHERE user_uid = $1 AND kind = 'run'`,
        [owner.user.uid],
      )
    ).map((row) => [row.run_uid, row.tx]),
  );
  expect(tx.size).toBe(4);
  expect(tx.get(runs[1].uid)).not.toBe(tx.get(runs[2].uid));
  expect(Number((await balanceOf(owner)).credits)).toBe(96);
});
