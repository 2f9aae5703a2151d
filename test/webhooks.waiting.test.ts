import type { IncomingHttpHeaders } from 'node:http';
import { QueryTypes } from 'sequelize';
import { Webhook } from 'standardwebhooks';
import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, startHttpTarget, submitRun, waitForRun } from './support/run-factories';
import type { CircuitDefinition } from '../src/domain/definition';

/**
 * The webhook event `waiting` (docs/webhooks-and-schedules.md): when a run begins to wait on an approval or a signal,
 * its webhook is sent `circuit_run.waiting` with the run as its owner reads it, whose `waiting_for` carries the decision
 * or callback URL, and the wait that began as `data.step`. A wait for a time sends none.
 */

jest.setTimeout(60_000);

let t: TestApp;
let owner: TestUser;
let receiver: Awaited<ReturnType<typeof startHttpTarget>>;
let verifier: Webhook;

beforeAll(async () => {
  t = await startTestApp({ runRateLimitPerMinute: 0, webhookRetryBaseMs: 100 });
  owner = await makeUser({ credits: 1_000 });
  receiver = await startHttpTarget((_req, res) => res.writeHead(204).end());
  const secret = await t.rest('GET', '/webhooks/default/secret', { token: owner.token });
  verifier = new Webhook(secret.body.payload.key);
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

const asHeaders = (headers: IncomingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)]));

interface Message {
  type: string;
  timestamp: string;
  seq?: number;
  data: any;
}

/** The verified messages received at `path` so far. */
const messagesAt = (path: string): Message[] =>
  receiver.requests
    .filter((request) => request.url === path)
    .map((request) => verifier.verify(request.body, asHeaders(request.headers)) as Message);

async function messageOfType(path: string, type: string, timeoutMs = 20_000): Promise<Message> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = messagesAt(path).find((message) => message.type === type);
    if (found) return found;
    if (Date.now() > deadline)
      throw new Error(`${path}: no ${type} after ${timeoutMs} ms: ${JSON.stringify(messagesAt(path))}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The run's outbox rows once none is pending (nothing more will be sent for it). */
async function settledDeliveries(runUid: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await t.app.services.sequelize.query<{ event: string; step_key: string; status: string }>(
      'SELECT event, step_key, status FROM webhook_deliveries WHERE run_uid = $1 ORDER BY event, step_key',
      { bind: [runUid], type: QueryTypes.SELECT },
    );
    if (rows.every((row) => row.status !== 'pending')) return rows;
    if (Date.now() > deadline) throw new Error(`${runUid}: still pending: ${JSON.stringify(rows)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

let paths = 0;
async function start(definition: CircuitDefinition, events: string[]): Promise<{ uid: string; path: string }> {
  const path = `/hook-${++paths}`;
  const { adaptorUid } = await makeRunnableCircuit(owner, definition);
  const { body } = await submitRun(t, owner.token, adaptorUid, {
    input: {},
    webhook: `${receiver.url}${path}`,
    webhook_events_filter: events,
  });
  return { uid: body.payload.uid as string, path };
}

const approvalGate: CircuitDefinition = {
  query_schema: { type: 'object' },
  steps: [{ id: 'ask', kind: 'approval', prompt: 'Publish the report?' }],
  output: 'steps.ask.output',
};

test('an approval: a signed waiting message with waiting_for[0].decision_url, then completed once decided there', async () => {
  const { uid, path } = await start(approvalGate, ['waiting', 'completed']);
  const waiting = await messageOfType(path, 'circuit_run.waiting');
  expect(waiting.data).toMatchObject({ uid, state: 'RUNNING' });
  expect(waiting.data.waiting_for).toEqual([
    {
      step_id: 'ask',
      kind: 'approval',
      prompt: 'Publish the report?',
      expires_at: expect.any(String),
      decision_url: expect.stringMatching(new RegExp(`^${t.url}/decisions/${uid}/ask/[A-Za-z0-9_-]{43}$`)),
    },
  ]);
  expect(waiting.data.step).toMatchObject({ step_id: 'ask', kind: 'approval', status: 'waiting', for: 'approval' });
  // The run as its owner reads it while it waits, and the message's place in the run's log: the step event's seq.
  const { body: read } = await t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token });
  const { step: _step, ...run } = waiting.data;
  expect(run).toEqual(read.payload);
  const [logged] = await t.app.services.sequelize.query<{ seq: string }>(
    `SELECT seq FROM circuit_run_events WHERE run_uid = $1 AND kind = 'step' AND data->>'status' = 'waiting'`,
    { bind: [uid], type: QueryTypes.SELECT },
  );
  expect(waiting.seq).toBe(Number(logged.seq));

  // The person the receiver forwards the URL to decides there, without a token.
  const decided = await fetch(waiting.data.waiting_for[0].decision_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ approved: true, comment: 'publish' }),
  });
  expect(decided.status).toBe(200);
  expect((await waitForRun(t, uid, owner.token)).state).toBe('COMPLETED');
  const completed = await messageOfType(path, 'circuit_run.completed');
  expect(completed.data.result_blob.output).toMatchObject({ approved: true, comment: 'publish' });
  expect(completed.seq).toBeGreaterThan(waiting.seq!);

  expect(await settledDeliveries(uid)).toEqual([
    { event: 'completed', step_key: '', status: 'delivered' },
    { event: 'waiting', step_key: 'ask:waiting', status: 'delivered' },
  ]);
  expect(messagesAt(path).map((message) => message.type)).toEqual(['circuit_run.waiting', 'circuit_run.completed']);
  const listed = await t.rest('GET', `/circuit-runs/${uid}/webhook-deliveries`, { token: owner.token });
  expect(listed.body.data.map((row: any) => [row.event, row.step])).toEqual(
    expect.arrayContaining([['waiting', 'ask:waiting']]),
  );
});

test('a signal wait: the waiting message carries its callback_url', async () => {
  const { uid, path } = await start(
    { query_schema: { type: 'object' }, steps: [{ id: 'reply', kind: 'wait', for: 'signal' }] },
    ['waiting'],
  );
  const waiting = await messageOfType(path, 'circuit_run.waiting');
  expect(waiting.data.waiting_for).toEqual([
    {
      step_id: 'reply',
      kind: 'signal',
      expires_at: expect.any(String),
      callback_url: expect.stringContaining(`/api/v1/callbacks/${uid}/reply/`),
    },
  ]);
  expect(waiting.data.step).toMatchObject({ step_id: 'reply', kind: 'wait', for: 'signal' });
  const sent = await fetch(waiting.data.waiting_for[0].callback_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ done: true }),
  });
  expect(sent.status).toBe(202);
  expect((await waitForRun(t, uid, owner.token)).state).toBe('COMPLETED');
  expect(await settledDeliveries(uid)).toEqual([{ event: 'waiting', step_key: 'reply:waiting', status: 'delivered' }]);
});

test('a wait for a time sends no waiting message; nor does a run whose filter leaves waiting out', async () => {
  const timed = await start(
    { query_schema: { type: 'object' }, steps: [{ id: 'nap', kind: 'wait', for: 'time', duration_s: 1 }] },
    ['waiting', 'completed'],
  );
  const unasked = await start(approvalGate, ['completed']);
  for (const deadline = Date.now() + 20_000; ;) {
    const { body } = await t.rest('GET', `/circuit-runs/${unasked.uid}`, { token: owner.token });
    if (body.payload.waiting_for) break;
    if (Date.now() > deadline) throw new Error(`run ${unasked.uid} is not waiting`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const approved = await t.rest('POST', `/circuit-runs/${unasked.uid}/approvals/ask`, {
    token: owner.token,
    body: { approved: true },
  });
  expect(approved.status).toBe(200);

  expect((await waitForRun(t, timed.uid, owner.token)).state).toBe('COMPLETED');
  expect((await waitForRun(t, unasked.uid, owner.token)).state).toBe('COMPLETED');
  expect(await settledDeliveries(timed.uid)).toEqual([{ event: 'completed', step_key: '', status: 'delivered' }]);
  expect(await settledDeliveries(unasked.uid)).toEqual([{ event: 'completed', step_key: '', status: 'delivered' }]);
  await messageOfType(timed.path, 'circuit_run.completed');
  await messageOfType(unasked.path, 'circuit_run.completed');
  expect(messagesAt(timed.path).map((message) => message.type)).toEqual(['circuit_run.completed']);
  expect(messagesAt(unasked.path).map((message) => message.type)).toEqual(['circuit_run.completed']);
});
