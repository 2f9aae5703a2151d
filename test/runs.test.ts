import { startTestApp, TestApp } from './support/app';
import { makeUser, HELLO_DEFINITION } from './support/factories';
import { makeRunnableCircuit, readSse, submitRun, waitForRun } from './support/run-factories';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(async () => { await t.close(); });

test('the DESIGN §4 example completes with HELLO ADA and the SSE stream shows PROVISIONED, RUNNING, COMPLETED', async () => {
  const owner = await makeUser();
  const { adaptorUid, circuit, version } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const submitted = await submitRun(t, owner.token, adaptorUid, { input: { name: 'Ada' } });
  expect(submitted.status).toBe(200);
  expect(submitted.body).toEqual({ status: 'success', payload: { uid: expect.any(String), state: 'PROVISIONED', is_public: false } });
  const uid = submitted.body.payload.uid;
  const stream = readSse(`${t.url}/api/v1/circuit-runs/${uid}/events`, { token: owner.token });
  const run = await waitForRun(t, uid, owner.token);
  expect(run).toMatchObject({
    uid, user_uid: owner.user.uid, circuit_uid: circuit.uid, circuit_version_uid: version.uid, state: 'COMPLETED',
    is_public: false, document_type: 'circuit_run', result_blob: { output: 'HELLO ADA' },
  });
  const events = await stream;
  expect(events.status).toBe(200);
  expect(events.events.length).toBeGreaterThan(0);
});
