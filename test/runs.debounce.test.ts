import { QueryTypes } from 'sequelize';
import { useTestApp } from './support/app';
import { makeCircuit, makeUser, type TestUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import type { CircuitDefinition } from '../src/domain/definition';

const t = useTestApp();
jest.setTimeout(60_000);

// Long enough for 30 queries on a loaded runner to land inside one window.
const WINDOW_S = 6;
const DEBOUNCED: CircuitDefinition = {
  query_schema: { type: 'object', properties: { doc: {}, n: { type: 'integer' } }, required: ['doc'] },
  steps: [{ id: 'echo', kind: 'transform', expression: '{"doc": input.doc, "n": input.n}' }],
  debounce: { key: 'doc-{{input.doc}}', window_s: WINDOW_S },
};

async function runsOf(user: TestUser, circuitUid: string) {
  return t.app.services.sequelize.query<{ uid: string; state: string; debounce_key: string; input: { n: number } }>(
    'SELECT uid, state, debounce_key, input FROM circuit_runs WHERE user_uid = $1 AND circuit_uid = $2 ORDER BY created_at',
    { bind: [user.user.uid, circuitUid], type: QueryTypes.SELECT },
  );
}

async function balance(user: TestUser) {
  const me = await t.rest('GET', '/users/me', { token: user.token });
  return { credits: Number(me.body.payload.credits), held: Number(me.body.payload.credits_held) };
}

test('30 queries of one key within the window make one run: every caller answered its uid, one credit held, started at the window end with the latest input', async () => {
  const owner = await makeUser({ credits: 50 });
  const { adaptorUid, circuit } = await makeRunnableCircuit(owner, DEBOUNCED);
  const opened = Date.now();
  // 29 at once (two first queries must still make one run), then the last one.
  const first = await Promise.all(
    Array.from({ length: 29 }, (_, i) => submitRun(t, owner.token, adaptorUid, { input: { doc: 'd1', n: i + 1 } })),
  );
  const last = await submitRun(t, owner.token, adaptorUid, { input: { doc: 'd1', n: 30 } });
  const answered = [...first, last];
  expect(answered.every((res) => res.status === 200)).toBe(true);
  const uids = new Set(answered.map((res) => res.body.payload.uid as string));
  expect(uids.size).toBe(1);
  expect(Date.now() - opened).toBeLessThan(WINDOW_S * 1000);
  const [uid] = [...uids];
  expect(last.body.payload.state).toBe('PROVISIONED');

  const rows = await runsOf(owner, circuit.uid);
  expect(rows).toHaveLength(1);
  expect(rows[0].debounce_key).toBe('doc-d1');
  expect(await balance(owner)).toEqual({ credits: 50, held: 1 });
  // Waiting for the window's end, it shows when it starts.
  const waiting = await t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token });
  expect(new Date(waiting.body.payload.start_at).getTime()).toBeGreaterThan(opened);

  const done = await waitForRun(t, uid, owner.token, 20_000);
  expect(done.state).toBe('COMPLETED');
  expect(done.result_blob.output).toEqual({ doc: 'd1', n: 30 });
  expect(new Date(done.ended_at).getTime() - opened).toBeGreaterThanOrEqual(WINDOW_S * 1000 - 50);
  expect(await balance(owner)).toEqual({ credits: 49, held: 0 });

  // The window is over: the next query opens another.
  const next = await submitRun(t, owner.token, adaptorUid, { input: { doc: 'd1', n: 31 } });
  expect(next.body.payload.uid).not.toBe(uid);
});

test('keys, callers and windows: another key or another caller gets its own run; Idempotency-Key and Prefer: wait work on the shared run', async () => {
  const owner = await makeUser({ credits: 50 });
  const other = await makeUser({ credits: 50 });
  const { adaptorUid, circuit } = await makeRunnableCircuit(owner, DEBOUNCED, { isPrivate: false });
  const a = await submitRun(t, owner.token, adaptorUid, { input: { doc: 'a', n: 1 } });
  const b = await submitRun(t, owner.token, adaptorUid, { input: { doc: 'b', n: 1 } });
  const theirs = await submitRun(t, other.token, adaptorUid, { input: { doc: 'a', n: 1 } });
  expect(new Set([a.body.payload.uid, b.body.payload.uid, theirs.body.payload.uid]).size).toBe(3);
  const again = await submitRun(t, owner.token, adaptorUid, { input: { doc: 'a', n: 2 } }, { 'Idempotency-Key': 'k1' });
  expect(again.body.payload.uid).toBe(a.body.payload.uid);
  const retried = await submitRun(
    t,
    owner.token,
    adaptorUid,
    { input: { doc: 'a', n: 2 } },
    { 'Idempotency-Key': 'k1' },
  );
  expect(retried.body.payload.uid).toBe(a.body.payload.uid);
  const waited = await submitRun(t, owner.token, adaptorUid, { input: { doc: 'a', n: 3 } }, { Prefer: 'wait=10' });
  expect(waited.body.payload).toMatchObject({ uid: a.body.payload.uid, state: 'COMPLETED' });
  expect(waited.body.payload.result_blob.output).toEqual({ doc: 'a', n: 3 });
  // b's window ends about when a's does: each is waited for, not assumed over.
  for (const uid of [a.body.payload.uid, b.body.payload.uid]) await waitForRun(t, uid, owner.token, 20_000);
  expect((await runsOf(owner, circuit.uid)).map((run) => run.state)).toEqual(['COMPLETED', 'COMPLETED']);
});

test('bad input: a window of 0 or 3601, a key with a helper, a key that renders an object, start_at with a debounce; a 10 KB key is kept as its hash', async () => {
  const owner = await makeUser({ credits: 50 });
  const { circuit } = await makeCircuit(owner, {}, null);
  const publish = (debounce: unknown) =>
    t.rest('POST', `/circuits/${circuit.uid}/versions`, {
      token: owner.token,
      body: { ...DEBOUNCED, debounce },
    });
  for (const [debounce, words] of [
    [
      { key: '{{input.doc}}', window_s: 0 },
      'definition.debounce.window_s must be a whole number of seconds from 1 to 3600',
    ],
    [{ key: '{{input.doc}}', window_s: 3601 }, 'definition.debounce.window_s'],
    [{ key: '{{#if input.doc}}x{{/if}}', window_s: 5 }, 'definition.debounce.key must be text and {{input.<field>}}'],
    [{ window_s: 5 }, 'definition.debounce.key'],
    [{ key: '{{input.doc}}', window_s: 5, sliding: true }, 'sliding'],
  ] as const) {
    const res = await publish(debounce);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(words);
  }

  const { adaptorUid } = await makeRunnableCircuit(owner, DEBOUNCED);
  const object = await submitRun(t, owner.token, adaptorUid, { input: { doc: { id: 1 } } });
  expect(object.status).toBe(400);
  expect(object.body.error.message).toBe(
    'input.doc is an object, and debounce.key renders it: a key is made of strings, numbers and booleans',
  );
  const delayed = await submitRun(t, owner.token, adaptorUid, { input: { doc: 'x' }, delay_s: 60 });
  expect(delayed.status).toBe(400);
  expect(delayed.body.error.message).toMatch(/delay_s/);

  const long = 'x'.repeat(10_240);
  const first = await submitRun(t, owner.token, adaptorUid, { input: { doc: long } });
  const second = await submitRun(t, owner.token, adaptorUid, { input: { doc: long, n: 2 } });
  expect(second.body.payload.uid).toBe(first.body.payload.uid);
  const [row] = await t.app.services.sequelize.query<{ debounce_key: string }>(
    'SELECT debounce_key FROM circuit_runs WHERE uid = $1',
    { bind: [first.body.payload.uid], type: QueryTypes.SELECT },
  );
  expect(row.debounce_key).toMatch(/^sha256:[0-9a-f]{64}$/);
});
