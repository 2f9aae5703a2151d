import { startTestApp, TestApp } from './support/app';
import { makeUser, makeCircuit, HELLO_DEFINITION, TestUser } from './support/factories';
import { makeRunnableCircuit, startHoldingTarget, submitRun, waitForRun } from './support/run-factories';
import { CircuitAdaptor, CircuitMetric, User } from '../src/models';
import { CircuitRun } from '../src/models/CircuitRun';
import { CreditLedger } from '../src/models/CreditLedger';
import type { CircuitDefinition } from '../src/domain/definition';

let t: TestApp;
let target: Awaited<ReturnType<typeof startHoldingTarget>>;
beforeAll(async () => {
  t = await startTestApp();
  target = await startHoldingTarget();
});
afterAll(async () => {
  await target.close();
  await t.close();
});

const AGE_DEFINITION: CircuitDefinition = {
  query_schema: {
    type: 'object',
    properties: {
      name: { type: 'string' },
      age: { type: 'integer' },
      tags: { type: 'array', items: { type: 'string' } },
    },
    required: ['name'],
  },
  steps: [{ id: 'greet', kind: 'template', template: '{{input.name}} is {{input.age}}' }],
};

const holdDefinition = () => target.holdDefinition();

describe('POST /circuit-adaptors/{adaptor_uid}/query', () => {
  let owner: TestUser;
  let other: TestUser;
  let hello: Awaited<ReturnType<typeof makeRunnableCircuit>>;
  beforeAll(async () => {
    owner = await makeUser();
    other = await makeUser();
    hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  });

  test('answers the stub only: uid, state PROVISIONED and is_public', async () => {
    const res = await submitRun(t, other.token, hello.adaptorUid, { input: { name: 'Ada' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'success',
      payload: { uid: expect.any(String), state: 'PROVISIONED', is_public: false },
    });
    await waitForRun(t, res.body.payload.uid, other.token);
  });

  test('runs the pinned context.version, else the primary', async () => {
    const { circuit, version: v1, adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const v2 = await t.gql(
      'mutation($c: ID!, $d: JSON!) { publishCircuitVersion(circuitUid: $c, definition: $d, primary: true) { uid } }',
      { c: circuit.uid, d: { ...HELLO_DEFINITION, output: '"v2 " & steps.shout.output' } },
      owner.token,
    );
    const v2uid = v2.data.publishCircuitVersion.uid;
    const pinned = await submitRun(t, owner.token, adaptorUid, { context: { version: v1.uid }, input: { name: 'a' } });
    const primary = await submitRun(t, owner.token, adaptorUid, { input: { name: 'b' } });
    const [p, q] = await Promise.all([
      waitForRun(t, pinned.body.payload.uid, owner.token),
      waitForRun(t, primary.body.payload.uid, owner.token),
    ]);
    expect(p).toMatchObject({ circuit_version_uid: v1.uid, result_blob: { output: 'HELLO A' } });
    expect(q).toMatchObject({ circuit_version_uid: v2uid, result_blob: { output: 'v2 HELLO B' } });
  });

  test.each([
    ['no body fields', {}, 'input is required'],
    ['an unknown body field', { input: { name: 'a' }, extra: 1 }, 'Unknown field: extra'],
    ['a missing required input field', { input: {} }, 'input.name is required'],
    ['a wrongly typed input field', { input: { name: 'a', age: 'old' } }, 'input.age must be integer'],
    ['a wrongly typed array item', { input: { name: 'a', tags: ['x', 3] } }, 'input.tags[1] must be string'],
    ['an input that is not an object', { input: ['a'] }, 'input must be object'],
    ['an unknown context field', { context: { versio: 'x' }, input: { name: 'a' } }, 'versio'],
  ])('400 BadClientData for %s', async (_what, body, message) => {
    const { adaptorUid } = await makeRunnableCircuit(owner, AGE_DEFINITION);
    const res = await submitRun(t, owner.token, adaptorUid, body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BadClientData');
    expect(res.body.error.message).toContain(message);
  });

  test('400 for malformed JSON', async () => {
    const res = await t.rest('POST', `/circuit-adaptors/${hello.adaptorUid}/query`, {
      token: owner.token,
      rawBody: '{"input": ',
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BadClientData');
  });

  test('401 without a token or with a revoked one', async () => {
    expect((await submitRun(t, undefined, hello.adaptorUid, { input: { name: 'a' } })).status).toBe(401);
    const bad = await submitRun(t, 'cst_notatoken', hello.adaptorUid, { input: { name: 'a' } });
    expect(bad.status).toBe(401);
    expect(bad.body.error.code).toBe('Unauthorized');
  });

  test('403 for a private circuit of someone else, and for is_public from anyone but the circuit owner', async () => {
    const secret = await makeRunnableCircuit(owner, HELLO_DEFINITION, { isPrivate: true });
    const denied = await submitRun(t, other.token, secret.adaptorUid, { input: { name: 'a' } });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('NotAllowed');
    const notOwner = await submitRun(t, other.token, hello.adaptorUid, { input: { name: 'a' }, is_public: true });
    expect(notOwner.status).toBe(403);
    const byOwner = await submitRun(t, owner.token, hello.adaptorUid, { input: { name: 'a' }, is_public: true });
    expect(byOwner.status).toBe(200);
    expect(byOwner.body.payload.is_public).toBe(true);
    const explicitFalse = await submitRun(t, other.token, hello.adaptorUid, { input: { name: 'a' }, is_public: false });
    expect(explicitFalse.status).toBe(200);
  });

  test('404 for unknown or malformed adaptors and versions, and for a circuit without versions', async () => {
    const input = { input: { name: 'a' } };
    expect((await submitRun(t, owner.token, '00000000-0000-4000-8000-000000000000', input)).status).toBe(404);
    expect((await submitRun(t, owner.token, 'not-a-uid', input)).status).toBe(404);
    const elsewhere = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const foreign = await submitRun(t, owner.token, hello.adaptorUid, {
      ...input,
      context: { version: elsewhere.version.uid },
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('NotFound');
    expect((await submitRun(t, owner.token, hello.adaptorUid, { ...input, context: { version: 'nope' } })).status).toBe(
      404,
    );
    const { circuit } = await makeCircuit(owner, {}, null);
    const adaptor = await CircuitAdaptor.findOne({ where: { circuit_uid: circuit.uid } });
    expect((await submitRun(t, owner.token, adaptor!.uid, input)).status).toBe(404);
  });

  test('402 InsufficientCredits when the balance cannot cover one credit', async () => {
    const broke = await makeUser({ credits: 0 });
    const res = await submitRun(t, broke.token, hello.adaptorUid, { input: { name: 'a' } });
    expect(res.status).toBe(402);
    expect(res.body.error.code).toBe('InsufficientCredits');
    expect(await CircuitRun.count({ where: { user_uid: broke.user.uid } })).toBe(0);
  });

  test('Idempotency-Key: the same caller and key return the same run; another body is 422; another caller is separate', async () => {
    const key = { 'Idempotency-Key': `key-${Date.now()}` };
    const first = await submitRun(t, other.token, hello.adaptorUid, { input: { name: 'idem' } }, key);
    const again = await submitRun(t, other.token, hello.adaptorUid, { input: { name: 'idem' } }, key);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body.payload.uid).toBe(first.body.payload.uid);
    const changed = await submitRun(t, other.token, hello.adaptorUid, { input: { name: 'different' } }, key);
    expect(changed.status).toBe(422);
    expect(changed.body.error.code).toBe('IdempotencyKeyReused');
    const someoneElse = await submitRun(t, owner.token, hello.adaptorUid, { input: { name: 'idem' } }, key);
    expect(someoneElse.body.payload.uid).not.toBe(first.body.payload.uid);
    const concurrent = { 'Idempotency-Key': `race-${Date.now()}` };
    const racing = await Promise.all(
      [1, 2, 3, 4].map(() => submitRun(t, other.token, hello.adaptorUid, { input: { name: 'r' } }, concurrent)),
    );
    expect(new Set(racing.map((r) => r.body.payload.uid)).size).toBe(1);
    expect(await CircuitRun.count({ where: { uid: racing[0].body.payload.uid } })).toBe(1);
    await waitForRun(t, first.body.payload.uid, other.token);
  });

  test('an Idempotency-Key older than 24 hours starts a new run', async () => {
    const key = { 'Idempotency-Key': `old-${Date.now()}` };
    const first = await submitRun(t, other.token, hello.adaptorUid, { input: { name: 'x' } }, key);
    await t.app.services.sequelize.query(
      "UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE run_uid = $1",
      { bind: [first.body.payload.uid] },
    );
    const later = await submitRun(t, other.token, hello.adaptorUid, { input: { name: 'x' } }, key);
    expect(later.status).toBe(200);
    expect(later.body.payload.uid).not.toBe(first.body.payload.uid);
  });

  test('a deprecated circuit still runs, with a Deprecation header and notices', async () => {
    const old = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    await old.circuit.update({ is_deprecated: true });
    const res = await submitRun(t, other.token, old.adaptorUid, { input: { name: 'old' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('deprecation')).toMatch(/^@\d+$/);
    expect(res.body.notices).toEqual([expect.objectContaining({ code: 'deprecated' })]);
    await waitForRun(t, res.body.payload.uid, other.token);
    const read = await t.rest('GET', `/circuit-runs/${res.body.payload.uid}`, { token: other.token });
    expect(read.body.payload.state).toBe('COMPLETED');
    expect(read.body.notices).toEqual([expect.objectContaining({ code: 'deprecated' })]);
  });
});

describe('GET /circuit-runs/{uid}', () => {
  let owner: TestUser;
  let other: TestUser;
  beforeAll(async () => {
    owner = await makeUser();
    other = await makeUser();
  });

  test('a completed run has every field of the API contract', async () => {
    const { adaptorUid, circuit, version } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const { body } = await submitRun(t, other.token, adaptorUid, { input: { name: 'Ada' } });
    await waitForRun(t, body.payload.uid, other.token);
    const res = await t.rest('GET', `/circuit-runs/${body.payload.uid}`, { token: other.token });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('success');
    const run = res.body.payload;
    // The contract's fields, and what only the owner sees: the query's priority (docs/runs.md, Priority).
    expect(Object.keys(run).sort()).toEqual(
      [
        'circuit_uid',
        'circuit_version_uid',
        'created_at',
        'document_type',
        'ended_at',
        'is_public',
        'priority',
        'result_blob',
        'state',
        'uid',
        'user_uid',
      ].sort(),
    );
    expect(run).toMatchObject({
      user_uid: other.user.uid,
      circuit_uid: circuit.uid,
      circuit_version_uid: version.uid,
      document_type: 'circuit_run',
      is_public: false,
    });
    expect(new Date(run.ended_at).getTime()).toBeGreaterThanOrEqual(new Date(run.created_at).getTime());
    expect(run.result_blob.output).toBe('HELLO ADA');
    expect(run.result_blob.steps.greet).toEqual({
      kind: 'template',
      output: 'Hello Ada',
      started_at: expect.any(String),
      ended_at: expect.any(String),
      credits: 0,
    });
    expect(run.result_blob.steps.shout).toMatchObject({ kind: 'transform', output: 'HELLO ADA' });
  });

  test('while in flight, ended_at and result_blob are absent', async () => {
    const { adaptorUid } = await makeRunnableCircuit(owner, holdDefinition());
    const { body } = await submitRun(t, owner.token, adaptorUid, { input: {} });
    const uid = body.payload.uid;
    const deadline = Date.now() + 10_000;
    let run: any;
    do {
      run = (await t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token })).body.payload;
    } while (run.state !== 'RUNNING' && Date.now() < deadline);
    expect(run.state).toBe('RUNNING');
    expect(run).not.toHaveProperty('ended_at');
    expect(run).not.toHaveProperty('result_blob');
    await target.untilHeld();
    target.release();
    expect((await waitForRun(t, uid, owner.token)).result_blob.output).toEqual({ released: true });
  });

  test('private runs: 401 without a token, 403 with another token; public runs: anyone', async () => {
    const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const priv = (await submitRun(t, other.token, adaptorUid, { input: { name: 'p' } })).body.payload.uid;
    const pub = (await submitRun(t, owner.token, adaptorUid, { input: { name: 'p' }, is_public: true })).body.payload
      .uid;
    await waitForRun(t, pub, owner.token);
    const anonymous = await t.rest('GET', `/circuit-runs/${priv}`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe('Unauthorized');
    const stranger = await t.rest('GET', `/circuit-runs/${priv}`, { token: owner.token });
    expect(stranger.status).toBe(403);
    expect(stranger.body.error.code).toBe('NotAllowed');
    expect((await t.rest('GET', `/circuit-runs/${priv}`, { token: other.token })).status).toBe(200);
    expect((await t.rest('GET', `/circuit-runs/${pub}`)).status).toBe(200);
    expect((await t.rest('GET', `/circuit-runs/${pub}`, { token: other.token })).status).toBe(200);
    expect((await t.rest('GET', `/circuit-runs/${pub}`, { token: 'cst_bogus' })).status).toBe(401);
  });

  test('404 for unknown and malformed uids', async () => {
    for (const uid of ['00000000-0000-4000-8000-000000000000', 'abc', '1']) {
      const res = await t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NotFound');
    }
  });

  test('a failing run ends in EXCEPTION with ended_at, without result_blob; its error {code, message, step_id} only for its owner', async () => {
    const failing: CircuitDefinition = {
      query_schema: { type: 'object' },
      steps: [{ id: 'boom', kind: 'transform', expression: '$error("secret failure detail")' }],
    };
    const { adaptorUid } = await makeRunnableCircuit(owner, failing);
    const { body } = await submitRun(t, owner.token, adaptorUid, { input: {}, is_public: true });
    const run = await waitForRun(t, body.payload.uid, owner.token);
    expect(run.state).toBe('EXCEPTION');
    expect(run.ended_at).toEqual(expect.any(String));
    expect(run).not.toHaveProperty('result_blob');
    expect(run.error).toEqual({
      code: 'StepFailed',
      message: expect.stringContaining('secret failure detail'),
      step_id: 'boom',
    });
    const stored = await CircuitRun.findByPk(body.payload.uid);
    expect(stored!.failure_reason).toContain('secret failure detail');
    const query = 'query($u: ID!) { circuitRun(uid: $u) { state resultBlob endedAt error { code message stepId } } }';
    const gql = await t.gql(query, { u: body.payload.uid }, owner.token);
    expect(gql.data.circuitRun.error).toEqual({ code: 'StepFailed', message: run.error.message, stepId: 'boom' });
    // The run is public: others read it, without its error.
    for (const token of [other.token, undefined]) {
      const seen = await t.rest('GET', `/circuit-runs/${body.payload.uid}`, { token });
      expect(seen.body.payload.state).toBe('EXCEPTION');
      expect(seen.body.payload).not.toHaveProperty('error');
      const viaGql = await t.gql(query, { u: body.payload.uid }, token);
      expect((viaGql.data as any).circuitRun.error).toBeNull();
    }
  });
});

describe('run lists', () => {
  test('completed public runs only, newest first, paginated; 404 for unknown; private circuits only for who may read them', async () => {
    const owner = await makeUser();
    const other = await makeUser();
    const { adaptorUid, circuit, version } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const uids: string[] = [];
    for (const name of ['a', 'b', 'c']) {
      const { body } = await submitRun(t, owner.token, adaptorUid, { input: { name }, is_public: true });
      await waitForRun(t, body.payload.uid, owner.token);
      uids.push(body.payload.uid);
    }
    const priv = await submitRun(t, owner.token, adaptorUid, { input: { name: 'private' } });
    await waitForRun(t, priv.body.payload.uid, owner.token);

    const byVersion = await t.rest('GET', `/circuit-versions/${version.uid}/circuit-runs?limit=2`);
    expect(byVersion.status).toBe(200);
    expect(byVersion.body.meta).toEqual({ total_count: 3, limit: 2, page: 1 });
    expect(byVersion.body.data.map((r: any) => r.uid)).toEqual([uids[2], uids[1]]);
    expect(byVersion.body.data[0]).toMatchObject({
      state: 'COMPLETED',
      is_public: true,
      document_type: 'circuit_run',
      result_blob: { output: 'HELLO C' },
    });
    const page2 = await t.rest('GET', `/circuit-versions/${version.uid}/circuit-runs?limit=2&page=2`);
    expect(page2.body.data.map((r: any) => r.uid)).toEqual([uids[0]]);
    const byCircuit = await t.rest('GET', `/circuits/${circuit.uid}/circuit-runs`, { token: other.token });
    expect(byCircuit.body.meta).toEqual({ total_count: 3, limit: 10, page: 1 });

    expect((await t.rest('GET', `/circuit-versions/00000000-0000-4000-8000-000000000000/circuit-runs`)).status).toBe(
      404,
    );
    expect((await t.rest('GET', `/circuits/nope/circuit-runs`)).status).toBe(404);
    expect((await t.rest('GET', `/circuits/${circuit.uid}/circuit-runs?limit=0`)).status).toBe(400);
    expect((await t.rest('GET', `/circuits/${circuit.uid}/circuit-runs?page=x`)).status).toBe(400);
    expect((await t.rest('GET', `/circuits/${circuit.uid}/circuit-runs?limit=1000`)).body.meta.limit).toBe(100);

    const secret = await makeRunnableCircuit(owner, HELLO_DEFINITION, { isPrivate: true });
    expect((await t.rest('GET', `/circuits/${secret.circuit.uid}/circuit-runs`)).status).toBe(401);
    expect((await t.rest('GET', `/circuits/${secret.circuit.uid}/circuit-runs`, { token: other.token })).status).toBe(
      403,
    );
    expect(
      (await t.rest('GET', `/circuit-versions/${secret.version.uid}/circuit-runs`, { token: other.token })).status,
    ).toBe(403);
    expect((await t.rest('GET', `/circuits/${secret.circuit.uid}/circuit-runs`, { token: owner.token })).status).toBe(
      200,
    );
  });
});

describe('credits', () => {
  test('each run is charged once in the ledger, in the transaction that ends it; viewer.credits shows the balance', async () => {
    const owner = await makeUser();
    const caller = await makeUser({ credits: 5 });
    const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const runs = await Promise.all(
      [1, 2, 3].map(() => submitRun(t, caller.token, adaptorUid, { input: { name: 'c' } })),
    );
    await Promise.all(runs.map((r) => waitForRun(t, r.body.payload.uid, caller.token)));
    const charges = await CreditLedger.findAll({ where: { user_uid: caller.user.uid, kind: 'run' } });
    expect(charges.map((l) => [Number(l.cost), Number(l.amount)])).toEqual([
      [1, -1],
      [1, -1],
      [1, -1],
    ]);
    expect(new Set(charges.map((l) => l.run_uid))).toEqual(new Set(runs.map((r) => r.body.payload.uid)));
    const viewer = await t.gql('{ viewer { credits } }', {}, caller.token);
    expect(viewer.data.viewer.credits).toBe(2);
  });

  test('a balance is never overspent: with 1 credit, only one of two concurrent queries starts a run', async () => {
    const owner = await makeUser();
    const caller = await makeUser({ credits: 1 });
    const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const answers = await Promise.all(
      [1, 2].map(() => submitRun(t, caller.token, adaptorUid, { input: { name: 'c' } })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 402]);
    await waitForRun(t, answers.find((a) => a.status === 200)!.body.payload.uid, caller.token);
    const charges = await CreditLedger.findAll({ where: { user_uid: caller.user.uid, kind: 'run' } });
    expect(charges.map((l) => Number(l.amount))).toEqual([-1]);
    expect((await User.findByPk(caller.user.uid))!.creditBalance).toBe(0);
    expect((await submitRun(t, caller.token, adaptorUid, { input: { name: 'c' } })).status).toBe(402);
  });
});

describe('metrics', () => {
  test("a completed run stores the values of its circuit's metric configuration", async () => {
    const owner = await makeUser();
    const metric = await CircuitMetric.create({
      user_uid: owner.user.uid,
      name: 'shape',
      metrics: [
        { name: 'length', expression: '$length(output)' },
        { name: 'greeted', expression: 'input.name' },
        { name: 'steps', expression: '$count($keys(steps))' },
      ],
    });
    const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION, { userCircuitMetricUid: metric.uid });
    const { body } = await submitRun(t, owner.token, adaptorUid, { input: { name: 'Ada' } });
    const run = await waitForRun(t, body.payload.uid, owner.token);
    expect(run.metrics).toEqual({ length: 9, greeted: 'Ada', steps: 2 });
    const gql = await t.gql('query($u: ID!) { circuitRun(uid: $u) { metrics } }', { u: body.payload.uid }, owner.token);
    expect(gql.data.circuitRun.metrics).toEqual({ length: 9, greeted: 'Ada', steps: 2 });
  });
});

describe('GraphQL', () => {
  const RUN = `uid userUid circuitUid circuitVersionUid createdAt endedAt state isPublic documentType resultBlob metrics`;

  test('queryCircuitAdaptor and circuitRun give what REST gives, with the same error codes', async () => {
    const owner = await makeUser();
    const other = await makeUser();
    const { adaptorUid, version } = await makeRunnableCircuit(owner, AGE_DEFINITION);
    const started = await t.gql(
      `mutation($a: ID!, $i: JSONObject!, $v: ID) { queryCircuitAdaptor(adaptorUid: $a, input: $i, context: { version: $v }) { uid state isPublic } }`,
      { a: adaptorUid, i: { name: 'Bo', age: 3 }, v: version.uid },
      other.token,
    );
    expect(started.errors).toBeUndefined();
    expect(started.data.queryCircuitAdaptor).toEqual({
      uid: expect.any(String),
      state: 'PROVISIONED',
      isPublic: false,
    });
    const uid = started.data.queryCircuitAdaptor.uid;
    const rest = await waitForRun(t, uid, other.token);
    const gql = await t.gql(`query($u: ID!) { circuitRun(uid: $u) { ${RUN} } }`, { u: uid }, other.token);
    expect(gql.data.circuitRun).toEqual({
      uid,
      userUid: other.user.uid,
      circuitUid: rest.circuit_uid,
      circuitVersionUid: version.uid,
      createdAt: rest.created_at,
      endedAt: rest.ended_at,
      state: 'COMPLETED',
      isPublic: false,
      documentType: 'circuit_run',
      resultBlob: rest.result_blob,
      metrics: null,
    });

    const cases: [string, Record<string, unknown>, string | undefined, string][] = [
      ['bad input', { a: adaptorUid, i: { name: 1 } }, other.token, 'BadClientData'],
      ['no token', { a: adaptorUid, i: { name: 'x' } }, undefined, 'Unauthorized'],
      ['unknown adaptor', { a: 'zzz', i: { name: 'x' } }, other.token, 'NotFound'],
      ['public by non-owner', { a: adaptorUid, i: { name: 'x' }, p: true }, other.token, 'NotAllowed'],
    ];
    for (const [, vars, token, code] of cases) {
      const res = await t.gql(
        `mutation($a: ID!, $i: JSONObject!, $p: Boolean) { queryCircuitAdaptor(adaptorUid: $a, input: $i, isPublic: $p) { uid } }`,
        vars,
        token,
      );
      expect(res.code).toBe(code);
    }
    expect((await t.gql(`query($u: ID!) { circuitRun(uid: $u) { uid } }`, { u: uid })).code).toBe('Unauthorized');
    expect((await t.gql(`query($u: ID!) { circuitRun(uid: $u) { uid } }`, { u: uid }, owner.token)).code).toBe(
      'NotAllowed',
    );
    expect((await t.gql(`query($u: ID!) { circuitRun(uid: $u) { uid } }`, { u: 'nope' }, owner.token)).code).toBe(
      'NotFound',
    );

    const broke = await makeUser({ credits: 0 });
    const poor = await t.gql(
      `mutation($a: ID!) { queryCircuitAdaptor(adaptorUid: $a, input: {name: "x"}) { uid } }`,
      { a: adaptorUid },
      broke.token,
    );
    expect(poor.code).toBe('InsufficientCredits');
  });

  test('circuitRuns and circuitVersionRuns list completed public runs', async () => {
    const owner = await makeUser();
    const { adaptorUid, circuit, version } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const { body } = await submitRun(t, owner.token, adaptorUid, { input: { name: 'g' }, is_public: true });
    await waitForRun(t, body.payload.uid, owner.token);
    const res = await t.gql(
      `query($c: ID!, $v: ID!) { circuitRuns(circuitUid: $c, limit: 5) { totalCount limit page items { uid state } }
        circuitVersionRuns(versionUid: $v) { totalCount items { uid } } }`,
      { c: circuit.uid, v: version.uid },
    );
    expect(res.data.circuitRuns).toEqual({
      totalCount: 1,
      limit: 5,
      page: 1,
      items: [{ uid: body.payload.uid, state: 'COMPLETED' }],
    });
    expect(res.data.circuitVersionRuns.items).toEqual([{ uid: body.payload.uid }]);
  });
});
