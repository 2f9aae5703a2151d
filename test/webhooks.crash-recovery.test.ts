import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeUser, TestUser } from './support/factories';
import {
  makeRunnableCircuit,
  ServiceProcess,
  spawnServiceProcess,
  startHttpTarget,
  submitRun,
  waitForRun,
} from './support/run-factories';

jest.setTimeout(90_000);

let t: TestApp;
let owner: TestUser;
let adaptorUid: string;
let receiver: Awaited<ReturnType<typeof startHttpTarget>>;
const held: ServerResponse[] = [];
let holdNext = false;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  // This process only enqueues; runs and deliveries happen in spawned worker processes.
  t = await startTestApp({ runWorker: false });
  owner = await makeUser({ credits: 10 });
  ({ adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION));
  receiver = await startHttpTarget((_req, res) => {
    if (holdNext) {
      holdNext = false;
      held.push(res);
    } else {
      res.writeHead(204).end();
    }
  });
});
afterAll(async () => {
  for (const res of held) res.destroy();
  await Promise.all(processes.map((p) => p.kill('SIGKILL')));
  await receiver.close();
  await t.close();
});

const asHeaders = (headers: IncomingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)]));

async function until<T>(
  what: string,
  read: () => Promise<T> | T,
  done: (value: T) => boolean,
  timeoutMs = 40_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function worker(): Promise<ServiceProcess> {
  const spawned = await spawnServiceProcess('worker', t.databaseUrl);
  processes.push(spawned);
  return spawned;
}

test('a delivery whose worker is SIGKILLed mid-attempt is made again by another worker, with the same webhook-id', async () => {
  const first = await worker();
  holdNext = true;
  const path = '/mid-attempt';
  const { body } = await submitRun(t, owner.token, adaptorUid, {
    input: { name: 'Ada' },
    webhook: `${receiver.url}${path}`,
  });
  const uid = body.payload.uid;
  await until(
    'first attempt',
    () => held.length,
    (n) => n === 1,
  );
  expect((await waitForRun(t, uid, owner.token)).state).toBe('COMPLETED');

  await first.kill('SIGKILL');
  held.pop()!.destroy();
  await worker();

  const requests = await until(
    'second attempt',
    () => receiver.requests.filter((r) => r.url === path),
    (r) => r.length === 2,
  );
  expect(requests[1].headers['webhook-id']).toBe(requests[0].headers['webhook-id']);
  expect(requests[1].body).toBe(requests[0].body);
  const secret = (await t.rest('GET', '/webhooks/default/secret', { token: owner.token })).body.payload.key;
  expect(new Webhook(secret).verify(requests[1].body, asHeaders(requests[1].headers))).toMatchObject({
    type: 'circuit_run.completed',
    data: { uid, state: 'COMPLETED' },
  });
  const attempts = await until(
    'recorded attempt',
    async () =>
      (await t.rest('GET', `/circuit-runs/${uid}/webhook-deliveries`, { token: owner.token })).body.data as any[],
    (a) => a.length === 1,
  );
  // Attempt 1 died with its worker; attempt 2 is the one that answered.
  expect(attempts).toEqual([expect.objectContaining({ attempt: 2, status_code: 204, error: null })]);
});

test('a run that ended while no worker queued its delivery is delivered by the sweeper of a worker started later', async () => {
  await Promise.all(processes.map((p) => p.kill('SIGKILL')));
  const path = '/never-queued';
  const { body } = await submitRun(t, owner.token, adaptorUid, {
    input: { name: 'Bo' },
    webhook: `${receiver.url}${path}`,
  });
  const uid = body.payload.uid;
  // As if a worker ended the run and died before its job queued the message: the transition alone wrote it.
  await t.app.services.sequelize.query(
    `UPDATE circuit_runs SET state = 'EXCEPTION', ended_at = now(), attempt = 1 WHERE uid = $1`,
    { bind: [uid] },
  );
  const [[{ n }]] = (await t.app.services.sequelize.query(
    `SELECT count(*) AS n FROM webhook_deliveries WHERE run_uid = $1`,
    { bind: [uid] },
  )) as [{ n: string }[], unknown];
  expect(Number(n)).toBe(1);

  await worker();
  const [request] = await until(
    'delivery',
    () => receiver.requests.filter((r) => r.url === path),
    (r) => r.length === 1,
  );
  const secret = (await t.rest('GET', '/webhooks/default/secret', { token: owner.token })).body.payload.key;
  expect(new Webhook(secret).verify(request.body, asHeaders(request.headers))).toMatchObject({
    type: 'circuit_run.completed',
    data: { uid, state: 'EXCEPTION' },
  });
});
