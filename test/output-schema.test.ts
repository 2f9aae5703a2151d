import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { submitRun, waitForRun } from './support/run-factories';

/** A version's output_schema is validated at publish and holds every run's output. */
let t: TestApp;
let owner: TestUser;
beforeAll(async () => {
  t = await startTestApp();
  owner = await makeUser();
});
afterAll(async () => {
  await t?.close();
});

async function circuitWith(outputSchema: unknown) {
  const created = await t.rest('POST', '/circuits', {
    token: owner.token,
    body: { name: `out-${Math.random().toString(36).slice(2)}` },
  });
  expect(created.status).toBe(200);
  const published = await t.rest('POST', `/circuits/${created.body.payload.uid}/versions`, {
    token: owner.token,
    body: {
      query_schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      steps: [{ id: 'calc', kind: 'transform', expression: '{"score": input.n, "label": "n=" & $string(input.n)}' }],
      output: 'steps.calc.output',
      output_schema: outputSchema,
    },
  });
  return { adaptorUid: created.body.payload.adaptor_uid as string, published };
}

const SCHEMA = {
  type: 'object',
  properties: { score: { type: 'number', maximum: 10 }, label: { type: 'string' } },
  required: ['score', 'label'],
};

test('an output that satisfies output_schema completes the run', async () => {
  const { adaptorUid, published } = await circuitWith(SCHEMA);
  expect(published.status).toBe(200);
  const run = await submitRun(t, owner.token, adaptorUid, { input: { n: 3 } });
  const done = await waitForRun(t, run.body.payload.uid, owner.token);
  expect(done.state).toBe('COMPLETED');
  expect(done.result_blob.output).toEqual({ score: 3, label: 'n=3' });
});

test('an output that fails output_schema ends the run EXCEPTION OutputContractViolation naming the field', async () => {
  const { adaptorUid } = await circuitWith(SCHEMA);
  const run = await submitRun(t, owner.token, adaptorUid, { input: { n: 42 } });
  const done = await waitForRun(t, run.body.payload.uid, owner.token);
  expect(done.state).toBe('EXCEPTION');
  expect(done.error.code).toBe('OutputContractViolation');
  expect(done.error.message).toContain('output.score');
  expect(done.result_blob).toBeUndefined();
});

test('an invalid output_schema is refused at publish (400 naming output_schema)', async () => {
  const { published } = await circuitWith({ type: 'object', properties: { a: { type: 'no-such-type' } } });
  expect(published.status).toBe(400);
  expect(published.body.error.message).toMatch(/output_schema/);
  const notObject = await circuitWith('nope');
  expect(notObject.published.status).toBe(400);
  expect(notObject.published.body.error.message).toMatch(/output_schema/);
});
