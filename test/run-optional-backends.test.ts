import { startTestApp, TestApp } from './support/app';
import { makeUser, HELLO_DEFINITION } from './support/factories';
import { makeRunnableCircuit, readSse, submitRun, waitForRun } from './support/run-factories';

/**
 * The optional production backends, exercised only when their servers are named:
 * MONGODB_URL (Agenda job store on MongoDB) and REDIS_URL (run-state events over Redis pub/sub).
 */
const mongodbUrl = process.env.MONGODB_URL;
const redisUrl = process.env.REDIS_URL;

async function helloRoundTrip(t: TestApp) {
  const owner = await makeUser();
  const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const { body } = await submitRun(t, owner.token, adaptorUid, { input: { name: 'Ada' } });
  const stream = readSse(`${t.url}/api/v1/circuit-runs/${body.payload.uid}/events`, { token: owner.token });
  const run = await waitForRun(t, body.payload.uid, owner.token, 30_000);
  expect(run.result_blob.output).toBe('HELLO ADA');
  expect((await stream).events.at(-1)!.id).toBe('COMPLETED');
}

if (!mongodbUrl) console.log('run-optional-backends: skipping the MongoDB job store test: MONGODB_URL is unset');
(mongodbUrl ? test : test.skip)('runs execute through the MongoDB job store (MONGODB_URL)', async () => {
  const t = await startTestApp({ mongodbUrl });
  try {
    expect(t.app.services.runQueue.backendName).toBe('MongoDB');
    await helloRoundTrip(t);
  } finally {
    await t.close();
  }
}, 60_000);

if (!redisUrl) console.log('run-optional-backends: skipping the Redis run-event test: REDIS_URL is unset');
(redisUrl ? test : test.skip)('run-state events cross processes over Redis pub/sub (REDIS_URL)', async () => {
  const t = await startTestApp({ redisUrl });
  try {
    expect(t.app.services.runEvents.kind).toBe('redis');
    await helloRoundTrip(t);
  } finally {
    await t.close();
  }
});
