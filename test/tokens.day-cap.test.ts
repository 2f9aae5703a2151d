import { useTestApp } from './support/app';
import { HELLO_DEFINITION, makeUser, TestUser } from './support/factories';
import { makeEmbeddingCircuit } from './support/circuit-factories';
import { makeRunnableCircuit, waitForRun } from './support/run-factories';
import { createApiToken } from '../src/commands/create-api-token';
import { revokeApiToken } from '../src/commands/revoke-api-token';
import { CircuitAdaptor, type Circuit } from '../src/models';
import { CreditLedger } from '../src/models/CreditLedger';
import { fireSchedule } from '../src/schedules/fire';
import { findSchedule } from '../src/schedules/schedule-store';
import { utcDay } from '../src/credits/token-spend';

// A token's daily credit cap is counted at every credit hold (not only when a run is
// admitted) and settled to what runs cost when they end; schedules made with a token fire under it.

const t = useTestApp();
let owner: TestUser;
let hello: { circuit: Circuit; adaptorUid: string };

beforeAll(async () => {
  owner = await makeUser();
  hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
});

const query = (token: string, adaptorUid: string) =>
  t.rest('POST', `/circuit-adaptors/${adaptorUid}/query`, { token, body: { input: { name: 'Ada' } } });

async function spentToday(tokenUid: string): Promise<number> {
  const [row] = await t.app.services.sequelize.query<{ credits: string }>(
    'SELECT credits FROM api_token_day_spend WHERE token_uid = $1 AND day = $2',
    { bind: [tokenUid, utcDay()], type: 'SELECT' as never },
  );
  return Number(row?.credits ?? 0);
}

test('a step hold that would cross the cap is refused: the run ends InsufficientCredits, charged only what it used, and the day settles to the costs', async () => {
  const embedding = await makeEmbeddingCircuit(owner, hello.circuit);
  const embeddingAdaptor = (await CircuitAdaptor.findOne({ where: { circuit_uid: embedding.uid } }))!.uid;
  const { token, record } = await createApiToken(owner.user, 'capped', { maxCreditsPerDay: 2 });

  const first = await query(token, hello.adaptorUid);
  expect(await waitForRun(t, first.body.payload.uid, token)).toMatchObject({ state: 'COMPLETED' });
  expect(await spentToday(record.uid)).toBe(1);

  // Its base credit fits (2 of 2); the embedded run's hold would make 3.
  const second = await query(token, embeddingAdaptor);
  expect(second.status).toBe(200);
  const ended = await waitForRun(t, second.body.payload.uid, token);
  expect(ended).toMatchObject({ state: 'EXCEPTION', error: { code: 'InsufficientCredits' } });
  const charge = await CreditLedger.findOne({ where: { run_uid: second.body.payload.uid } });
  expect(Number(charge!.amount)).toBe(-1);
  expect(await spentToday(record.uid)).toBe(2);

  // The cap is reached: the next query is refused before any run exists.
  expect((await query(token, hello.adaptorUid)).status).toBe(429);
  // The same user's other token is not.
  expect((await query(owner.token, embeddingAdaptor)).status).toBe(200);
});

test('a schedule created with a token fires under its limits, and not at all once the token is revoked', async () => {
  const { token, record } = await createApiToken(owner.user, 'scheduler', {
    scopes: ['schedules:write', 'runs:write'],
    circuitUids: [hello.circuit.uid],
    maxCreditsPerDay: 1,
  });
  // Not on the allow-list: refused when the schedule is made.
  const other = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const refused = await t.rest('POST', `/circuits/${other.circuit.uid}/schedules`, {
    token,
    body: { cron: '0 0 1 1 *', input: { name: 'Ada' } },
  });
  expect(refused.status).toBe(403);
  expect(refused.body.error.message).toBe(`This token may not run the circuit ${other.circuit.uid}`);

  const created = await t.rest('POST', `/circuits/${hello.circuit.uid}/schedules`, {
    token,
    body: { cron: '0 0 1 1 *', input: { name: 'Ada' } },
  });
  expect(created.status).toBe(200);
  const schedule = (await findSchedule(t.app.services.sequelize, created.body.payload.uid))!;
  expect(schedule.token_uid).toBe(record.uid);

  await fireSchedule(t.app.services.schedules, schedule, new Date('2030-01-01T00:00:00Z'));
  const fired = (await findSchedule(t.app.services.sequelize, schedule.uid))!;
  expect(fired.last_error).toBeNull();
  expect(await waitForRun(t, fired.last_run_uid!, owner.token)).toMatchObject({ state: 'COMPLETED' });

  // The token's cap (1 credit) is spent: the next fire starts no run and says why.
  await fireSchedule(t.app.services.schedules, fired, new Date('2031-01-01T00:00:00Z'));
  expect((await findSchedule(t.app.services.sequelize, schedule.uid))!.last_error).toMatch(
    /^RateLimited: This token's runs may take at most 1 credits per UTC day/,
  );

  await revokeApiToken(owner.user, record.uid);
  await fireSchedule(t.app.services.schedules, fired, new Date('2032-01-01T00:00:00Z'));
  expect((await findSchedule(t.app.services.sequelize, schedule.uid))!.last_error).toBe(
    'Unauthorized: the API token it was created with has been revoked',
  );
});

test('the REST event stream of a run needs runs:read like the run itself', async () => {
  const run = await query(owner.token, hello.adaptorUid);
  const { token } = await createApiToken(owner.user, 'writer', { scopes: ['runs:write'] });
  const refused = await t.rest('GET', `/circuit-runs/${run.body.payload.uid}/events`, {
    token,
    headers: { accept: 'text/event-stream' },
  });
  expect(refused.status).toBe(403);
  expect(refused.body.error).toEqual({ code: 'NotAllowed', message: 'This token lacks the scope runs:read' });
});

test('a token with a day cap cannot submit a batch (its runs go as queries, each reserved against the cap); an uncapped one can', async () => {
  const { token: capped } = await createApiToken(owner.user, 'capped-batch', { maxCreditsPerDay: 5 });
  const refused = await t.rest('POST', `/circuit-adaptors/${hello.adaptorUid}/batches`, {
    token: capped,
    body: { inputs: [{ name: 'a' }, { name: 'b' }] },
  });
  expect(refused.status).toBe(403);
  expect(refused.body.error).toEqual({ code: 'NotAllowed', message: expect.stringContaining('daily credit cap') });
  const { token: plain } = await createApiToken(owner.user, 'plain-batch', { scopes: ['runs:write'] });
  const admitted = await t.rest('POST', `/circuit-adaptors/${hello.adaptorUid}/batches`, {
    token: plain,
    body: { inputs: [{ name: 'a' }, { name: 'b' }] },
  });
  expect(admitted.status).toBe(200);
  expect(admitted.body.payload.total).toBe(2);
});
