import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { QueryTypes } from 'sequelize';
import { startTestApp, type TestApp } from './support/app';
import { HELLO_DEFINITION, makeUser, type TestUser } from './support/factories';
import { makeRunnableCircuit, startHoldingTarget, submitRun, waitForRun } from './support/run-factories';

jest.setTimeout(180_000);

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function count(t: TestApp, sql: string, bind: unknown[]): Promise<number> {
  const [row] = await t.app.services.sequelize.query<{ n: string }>(sql, { bind, type: QueryTypes.SELECT });
  return Number(row.n);
}

/** A webhook receiver that answers 204 and keeps every message's run uid and type, in arrival order. */
async function startReceiver() {
  const messages: Array<{ uid: string; type: string }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString()) as { type: string; data: { uid: string } };
      messages.push({ uid: message.data.uid, type: message.type });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    messages,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('cancel by filter', () => {
  let t: TestApp;
  let target: Awaited<ReturnType<typeof startHoldingTarget>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    target = await startHoldingTarget();
    receiver = await startReceiver();
    // One receiver takes the 1,000 webhooks: let it take them 50 at a time (the default, 4, is for receivers of the world).
    t = await startTestApp({ userMaxConcurrentRuns: 20, webhookHostConcurrency: 50 });
  });
  afterAll(async () => {
    await target.close();
    await receiver.close();
    await t.close();
  });

  test('1,000 tagged runs (20 RUNNING, 980 waiting) canceled in one call: counts, each run ended Canceled once, charged once, one webhook each; a retry with the key answers the same; other runs untouched', async () => {
    const owner = await makeUser({ credits: 2000 });
    const other = await makeUser({ credits: 10 });
    const { adaptorUid } = await makeRunnableCircuit(owner, target.holdDefinition());
    const batch = await t.rest('POST', `/circuit-adaptors/${adaptorUid}/batches`, {
      token: owner.token,
      body: {
        inputs: Array.from({ length: 1000 }, () => ({})),
        tags: ['import-42'],
        webhook: `${receiver.url}/hook`,
        webhook_events_filter: ['completed'],
      },
    });
    expect(batch.status).toBe(200);
    expect(batch.body.payload.counts.PROVISIONED).toBe(1000);
    // Runs of the owner the filter does not name: parked (a delayed start) and another tag.
    const kept: string[] = [];
    for (const tags of [['import-43'], null]) {
      const res = await submitRun(t, owner.token, adaptorUid, { input: {}, delay_s: 3600, ...(tags ? { tags } : {}) });
      kept.push(res.body.payload.uid as string);
    }
    await until('20 runs held and 980 waiting for a slot', async () => {
      const waiting = await count(
        t,
        `SELECT count(*) AS n FROM circuit_runs WHERE user_uid = $1 AND state = 'PROVISIONED' AND slot_wait`,
        [owner.user.uid],
      );
      return target.held.length === 20 && waiting === 980;
    });

    // Another user's filter touches nothing of the owner's.
    const theirs = await t.rest('POST', '/users/circuit-runs/cancel', {
      token: other.token,
      body: { filter: { tag: 'import-42' } },
    });
    expect(theirs.status).toBe(200);
    expect(theirs.body).toEqual({ status: 'success', payload: { matched: 0, canceled: 0, truncated: false } });
    const theirBatch = await t.rest('POST', '/users/circuit-runs/cancel', {
      token: other.token,
      body: { filter: { batch_uid: batch.body.payload.uid } },
    });
    expect(theirBatch.body.payload).toEqual({ matched: 0, canceled: 0, truncated: false });

    const started = Date.now();
    const res = await t.rest('POST', '/users/circuit-runs/cancel', {
      token: owner.token,
      body: { filter: { tag: 'import-42' } },
      headers: { 'Idempotency-Key': 'cancel-import-42' },
    });
    const tookMs = Date.now() - started;
    expect(res.status).toBe(200);
    expect(res.body.payload).toEqual({ matched: 1000, canceled: 1000, truncated: false });
    console.log(`a cancel by filter of 1,000 runs answered in ${tookMs} ms`);

    const canceled = () =>
      count(
        t,
        `SELECT count(*) AS n FROM circuit_runs WHERE batch_uid = $1 AND state = 'EXCEPTION' AND error->>'code' = 'Canceled'`,
        [batch.body.payload.uid],
      );
    await until('all 1,000 ended Canceled', async () => (await canceled()) === 1000);

    // The same key again: the first answer, nothing done again.
    const retry = await t.rest('POST', '/users/circuit-runs/cancel', {
      token: owner.token,
      body: { filter: { tag: 'import-42' } },
      headers: { 'Idempotency-Key': 'cancel-import-42' },
    });
    expect(retry.body.payload).toEqual({ matched: 1000, canceled: 1000, truncated: false });
    const conflicting = await t.rest('POST', '/users/circuit-runs/cancel', {
      token: owner.token,
      body: { filter: { tag: 'import-43' } },
      headers: { 'Idempotency-Key': 'cancel-import-42' },
    });
    expect(conflicting.status).toBe(422);
    expect(conflicting.body.error.code).toBe('IdempotencyKeyReused');
    // A first call still at work (its key claimed, no answer yet): the retry is 409, not a second action.
    await t.app.services.sequelize.query("UPDATE idempotency_keys SET answer = NULL WHERE key = 'cancel-import-42'");
    const early = await t.rest('POST', '/users/circuit-runs/cancel', {
      token: owner.token,
      body: { filter: { tag: 'import-42' } },
      headers: { 'Idempotency-Key': 'cancel-import-42' },
    });
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('Conflict');
    // Without the key, a new call: nothing of the filter is in flight any more.
    const again = await t.rest('POST', '/users/circuit-runs/cancel', {
      token: owner.token,
      body: { filter: { tag: 'import-42' } },
    });
    expect(again.body.payload).toEqual({ matched: 0, canceled: 0, truncated: false });

    // The ledger: one charge of the base credit per run, the holds released, the untouched runs still holding theirs.
    expect(
      await count(
        t,
        `SELECT count(*) AS n FROM credit_ledger l JOIN circuit_runs r ON r.uid = l.run_uid WHERE r.batch_uid = $1 AND l.amount = -1`,
        [batch.body.payload.uid],
      ),
    ).toBe(1000);
    const me = await t.rest('GET', '/users/me', { token: owner.token });
    expect(Number(me.body.payload.credits)).toBe(1000);
    expect(Number(me.body.payload.credits_held)).toBe(2);
    for (const uid of kept) {
      const run = await t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token });
      expect(run.body.payload.state).toBe('PROVISIONED');
    }
    const [slots] = await t.app.services.sequelize.query<{ running: string }>(
      'SELECT s.claimed - e.ended AS running FROM user_run_slots s JOIN user_run_ends e USING (user_uid) WHERE user_uid = $1',
      { bind: [owner.user.uid], type: QueryTypes.SELECT },
    );
    expect(Number(slots.running)).toBe(0);

    // One webhook each: every delivery settled, one `completed` per run, received once.
    await until(
      'every webhook delivered',
      async () =>
        (await count(
          t,
          `SELECT count(*) AS n FROM webhook_deliveries d JOIN circuit_runs r ON r.uid = d.run_uid
            WHERE r.batch_uid = $1 AND d.status = 'delivered'`,
          [batch.body.payload.uid],
        )) === 1000,
    );
    expect(
      await count(
        t,
        `SELECT count(*) AS n FROM webhook_deliveries d JOIN circuit_runs r ON r.uid = d.run_uid WHERE r.batch_uid = $1`,
        [batch.body.payload.uid],
      ),
    ).toBe(1000);
    const completed = receiver.messages.filter((m) => m.type === 'circuit_run.completed');
    expect(completed).toHaveLength(1000);
    expect(new Set(completed.map((m) => m.uid)).size).toBe(1000);
  });

  test('a filter that matches nothing answers 0s; a bad filter is 400 naming its field; GraphQL cancelCircuitRuns answers alike', async () => {
    const owner = await makeUser({ credits: 10 });
    const none = await t.rest('POST', '/users/circuit-runs/cancel', {
      token: owner.token,
      body: { filter: { tag: 'nothing-here', state: 'RUNNING' } },
    });
    expect(none.status).toBe(200);
    expect(none.body.payload).toEqual({ matched: 0, canceled: 0, truncated: false });

    for (const [filter, field] of [
      [{ state: 'DONE' }, 'state'],
      [{ tag: 'Not A Tag' }, 'tag'],
      [{ colour: 'red' }, 'colour'],
      [{ created_after: 'yesterday' }, 'created_after'],
    ] as const) {
      const bad = await t.rest('POST', '/users/circuit-runs/cancel', { token: owner.token, body: { filter } });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain(field);
    }
    expect((await t.rest('POST', '/users/circuit-runs/cancel', { token: owner.token, body: {} })).status).toBe(400);
    expect((await t.rest('POST', '/users/circuit-runs/cancel', { body: { filter: {} } })).status).toBe(401);

    const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const parked = await submitRun(t, owner.token, hello.adaptorUid, { input: { name: 'x' }, delay_s: 600 });
    const gql = await t.gql(
      `mutation($f: CircuitRunFilter!) { cancelCircuitRuns(filter: $f) { matched canceled truncated } }`,
      { f: { circuitUid: hello.circuit.uid } },
      owner.token,
    );
    expect(gql.data).toEqual({ cancelCircuitRuns: { matched: 1, canceled: 1, truncated: false } });
    expect((await waitForRun(t, parked.body.payload.uid as string, owner.token)).error.code).toBe('Canceled');
  });
});

describe('replay by filter', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  async function endedRuns(owner: TestUser, adaptorUid: string, names: string[], tags: string[]) {
    const uids: string[] = [];
    for (const name of names) {
      const res = await submitRun(t, owner.token, adaptorUid, { input: { name }, tags });
      uids.push(res.body.payload.uid as string);
    }
    for (const uid of uids) expect((await waitForRun(t, uid, owner.token)).state).toBe('COMPLETED');
    return uids;
  }

  test("the ended runs of a filter (two circuits) are replayed as one batch with their own inputs; another user's filter replays nothing; 0 matches: no batch", async () => {
    const owner = await makeUser({ credits: 100 });
    const other = await makeUser({ credits: 100 });
    const a = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const b = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const fromA = await endedRuns(owner, a.adaptorUid, ['Ada', 'Bo'], ['nightly']);
    const fromB = await endedRuns(owner, b.adaptorUid, ['Cy'], ['nightly']);
    await endedRuns(owner, a.adaptorUid, ['Di'], ['daily']);

    const theirs = await t.rest('POST', '/users/circuit-runs/replay', {
      token: other.token,
      body: { filter: { tag: 'nightly' } },
    });
    expect(theirs.status).toBe(200);
    expect(theirs.body.payload).toEqual({ matched: 0, replayed: 0, truncated: false });

    const res = await t.rest('POST', '/users/circuit-runs/replay', {
      token: owner.token,
      body: { filter: { tag: 'nightly' }, mode: 'live' },
      headers: { 'Idempotency-Key': 'replay-nightly' },
    });
    expect(res.status).toBe(200);
    expect(res.body.payload).toMatchObject({ matched: 3, replayed: 3, truncated: false });
    const batchUid = res.body.payload.batch_uid as string;
    expect(batchUid).toEqual(expect.any(String));
    const retry = await t.rest('POST', '/users/circuit-runs/replay', {
      token: owner.token,
      body: { filter: { tag: 'nightly' }, mode: 'live' },
      headers: { 'Idempotency-Key': 'replay-nightly' },
    });
    expect(retry.body.payload).toEqual(res.body.payload);

    const batch = await t.rest('GET', `/batches/${batchUid}`, { token: owner.token });
    expect(batch.status).toBe(200);
    expect(batch.body.payload.total).toBe(3);
    expect(batch.body.payload.circuit_uid).toBeUndefined();
    await until('the replays completed', async () => {
      const now = await t.rest('GET', `/batches/${batchUid}`, { token: owner.token });
      return now.body.payload.counts.COMPLETED === 3;
    });
    const runs = await t.rest('GET', `/users/circuit-runs?batch_uid=${batchUid}&limit=10`, { token: owner.token });
    expect(runs.body.meta.total_count).toBe(3);
    const replayed = runs.body.data as Array<{ replay_of: string; result_blob: { output: string }; uid: string }>;
    expect(replayed.map((run) => run.replay_of).sort()).toEqual([...fromA, ...fromB].sort());
    expect(replayed.map((run) => run.result_blob.output).sort()).toEqual(['HELLO ADA', 'HELLO BO', 'HELLO CY']);
    // Replayed again: only the batch's own 3 replays are counted by the replays' tag-less filter.
    const me = await t.rest('GET', '/users/me', { token: owner.token });
    expect(Number(me.body.payload.credits)).toBe(100 - 4 - 3);

    const none = await t.rest('POST', '/users/circuit-runs/replay', {
      token: owner.token,
      body: { filter: { tag: 'nightly', state: 'RUNNING' } },
    });
    expect(none.body.payload).toEqual({ matched: 0, replayed: 0, truncated: false });
    const badMode = await t.rest('POST', '/users/circuit-runs/replay', {
      token: owner.token,
      body: { filter: {}, mode: 'fast' },
    });
    expect(badMode.status).toBe(400);

    const gql = await t.gql(
      `mutation($f: CircuitRunFilter!) { replayCircuitRuns(filter: $f) { matched replayed batchUid truncated } }`,
      { f: { tag: 'daily' } },
      owner.token,
    );
    expect(gql.data?.replayCircuitRuns).toMatchObject({ matched: 1, replayed: 1, truncated: false });
  });
});

describe('more than 10,000 matches', () => {
  let t: TestApp;
  beforeAll(async () => {
    // No worker: the replays stay PROVISIONED (this checks the cut, not 10,000 executions).
    t = await startTestApp({ runWorker: false });
  });
  afterAll(async () => {
    await t.close();
  });

  test('10,001 ended runs: the oldest 10,000 are replayed, matched says 10,001 and truncated is true', async () => {
    const owner = await makeUser({ credits: 20_000 });
    const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    await t.app.services.sequelize.query(
      `INSERT INTO circuit_runs (uid, user_uid, circuit_uid, circuit_version_uid, input, state, tags, ended_at, created_at, updated_at, credits_cost)
       SELECT gen_random_uuid(), $1, $2, $3, jsonb_build_object('name', 'n' || i), 'COMPLETED', ARRAY['bulk'],
              now(), now() - make_interval(secs => 20000 - i), now(), 1
         FROM generate_series(1, 10001) AS i`,
      { bind: [owner.user.uid, hello.circuit.uid, hello.version.uid] },
    );
    const started = Date.now();
    const res = await t.rest('POST', '/users/circuit-runs/replay', {
      token: owner.token,
      body: { filter: { tag: 'bulk' } },
    });
    console.log(`a replay by filter of 10,000 runs answered in ${Date.now() - started} ms`);
    expect(res.status).toBe(200);
    expect(res.body.payload).toMatchObject({ matched: 10_001, replayed: 10_000, truncated: true });
    const batch = await t.rest('GET', `/batches/${res.body.payload.batch_uid}`, { token: owner.token });
    expect(batch.body.payload).toMatchObject({ total: 10_000, circuit_uid: hello.circuit.uid });
    expect(batch.body.payload.counts.PROVISIONED).toBe(10_000);
    // The newest (n10001) was cut.
    expect(
      await count(
        t,
        `SELECT count(*) AS n FROM circuit_runs r JOIN circuit_runs o ON o.uid = r.replay_of
          WHERE r.batch_uid = $1 AND o.input->>'name' = 'n10001'`,
        [res.body.payload.batch_uid],
      ),
    ).toBe(0);
  });
});
