import { useTestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import { CircuitRun } from '../src/models/CircuitRun';
import { readWaitingSteps } from '../src/runs/approvals';
import { presentRunPayload } from '../src/runs/present';
import type { CircuitDefinition } from '../src/domain/definition';

/**
 * The one run presenter (src/runs/present.ts), which webhooks and the CLI send without GraphQL, shows
 * a run exactly as `GET /circuit-runs/{uid}` does, to its owner and to anyone else, in every state.
 */

const t = useTestApp();
let owner: TestUser;
let other: TestUser;
beforeAll(async () => {
  [owner, other] = await Promise.all([makeUser({ credits: 100 }), makeUser()]);
});

const json = (value: unknown) => JSON.parse(JSON.stringify(value));

async function presented(uid: string, mayDebug: boolean) {
  const run = (await CircuitRun.findByPk(uid))!;
  const waitingFor = run.state === 'RUNNING' ? (await readWaitingSteps(t.app.services.sequelize, [uid]))[0] : null;
  return json(
    presentRunPayload(run, { mayDebug, waitingFor, waitUrl: (...url) => t.app.services.runs.waitUrl(...url) }),
  );
}

async function expectSameAsGet(uid: string) {
  const asOwner = await t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token });
  expect(await presented(uid, true)).toEqual(asOwner.body.payload);
  const asOther = await t.rest('GET', `/circuit-runs/${uid}`, { token: other.token });
  expect(asOther.status).toBe(200);
  expect(await presented(uid, false)).toEqual(asOther.body.payload);
}

async function submitted(definition: CircuitDefinition, input: Record<string, unknown> = {}): Promise<string> {
  const { adaptorUid } = await makeRunnableCircuit(owner, definition);
  const { body } = await submitRun(t, owner.token, adaptorUid, { input, is_public: true });
  return body.payload.uid as string;
}

test('COMPLETED, with its result_blob', async () => {
  const uid = await submitted(
    { query_schema: { type: 'object' }, steps: [{ id: 'hi', kind: 'template', template: 'hi {{input.name}}' }] },
    { name: 'Ada' },
  );
  expect((await waitForRun(t, uid, owner.token)).state).toBe('COMPLETED');
  await expectSameAsGet(uid);
});

test('EXCEPTION of a step (error with step_id, owner only)', async () => {
  const uid = await submitted({
    query_schema: { type: 'object' },
    steps: [{ id: 'bad', kind: 'transform', expression: '$error("no")' }],
  });
  expect((await waitForRun(t, uid, owner.token)).state).toBe('EXCEPTION');
  await expectSameAsGet(uid);
});

test('RUNNING and waiting for an approval (waiting_for, owner only), then Canceled (an error without step_id)', async () => {
  const uid = await submitted({
    query_schema: { type: 'object' },
    steps: [{ id: 'ask', kind: 'approval', prompt: 'Go?' }],
  });
  for (const end = Date.now() + 15_000; Date.now() < end;) {
    if ((await t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token })).body.payload.waiting_for) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await expectSameAsGet(uid);
  expect((await presented(uid, true)).waiting_for).toHaveLength(1);
  await t.rest('POST', `/circuit-runs/${uid}/cancel`, { token: owner.token });
  expect((await waitForRun(t, uid, owner.token)).error.code).toBe('Canceled');
  await expectSameAsGet(uid);
});
