import { QueryTypes } from 'sequelize';
import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeCircuit, makeUser, TestUser } from './support/factories';
import { publishAgain } from './support/circuit-factories';
import { submitRun } from './support/run-factories';
import { Circuit, CircuitAdaptor, CircuitAliasHistory, CircuitVersion } from '../src/models';
import { setCircuitAlias } from '../src/commands/set-circuit-alias';
import { drawPoint, routeAt } from '../src/aliases/alias-routes';
import { createUser } from '../src/commands/create-user';

/**
 * Version aliases and the version lifecycle over REST. The worker is off: runs
 * stay PROVISIONED, and which version a query drew is read from the answer's run row.
 */
let t: TestApp;
let owner: TestUser;
let other: TestUser;

beforeAll(async () => {
  // 2,000 queries in seconds from one token: a load test, not a test of RUN_RATE_LIMIT_PER_MINUTE (test/tokens.rate-limit).
  t = await startTestApp({ runWorker: false, runRateLimitPerMinute: 0 });
  owner = await makeUser({ credits: 10_000 });
  other = await makeUser({ credits: 1_000 });
});
afterAll(async () => {
  await t.close();
});

/** A circuit of the owner with `count` versions (v1 primary), and its adaptor. */
async function circuitWithVersions(count: number, input: { isPrivate?: boolean } = {}) {
  const { circuit, version } = await makeCircuit(owner, input);
  const versions: CircuitVersion[] = [version!];
  for (let i = 1; i < count; i++) versions.push(await publishAgain(owner, circuit, HELLO_DEFINITION));
  const adaptor = await CircuitAdaptor.findOne({ where: { circuit_uid: circuit.uid } });
  return { circuit, versions, adaptorUid: adaptor!.uid };
}

const put = (circuit: Circuit, name: string, routes: unknown, token = owner.token) =>
  t.rest('PUT', `/circuits/${circuit.uid}/aliases/${name}`, { token, body: { routes } });

async function versionOfRun(uid: string): Promise<{ circuit_version_uid: string; alias: string | null }> {
  const [row] = await Circuit.sequelize!.query<{ circuit_version_uid: string; alias: string | null }>(
    'SELECT circuit_version_uid, alias FROM circuit_runs WHERE uid = $1',
    { bind: [uid], type: QueryTypes.SELECT },
  );
  return row;
}

describe('the version lifecycle over REST', () => {
  test('publish v2 without and with primary, promote one, read my profile', async () => {
    const {
      circuit,
      versions: [v1],
    } = await circuitWithVersions(1);
    const v2 = await t.rest('POST', `/circuits/${circuit.uid}/versions`, {
      token: owner.token,
      body: HELLO_DEFINITION,
    });
    expect(v2.status).toBe(200);
    expect(v2.body.payload).toEqual({
      uid: expect.any(String),
      circuit_uid: circuit.uid,
      number: 2,
      definition: HELLO_DEFINITION,
      is_primary: false,
      is_deprecated: false,
      created_at: expect.any(String),
    });
    const v3 = await t.rest('POST', `/circuits/${circuit.uid}/versions`, {
      token: owner.token,
      body: { ...HELLO_DEFINITION, primary: true },
    });
    expect(v3.body.payload).toMatchObject({ number: 3, is_primary: true });
    expect((await t.rest('GET', `/circuits/${circuit.uid}/primary`)).body.payload).toBe(v3.body.payload.uid);

    const promoted = await t.rest('PUT', `/circuits/${circuit.uid}/primary`, {
      token: owner.token,
      body: { version_uid: v2.body.payload.uid },
    });
    expect(promoted.status).toBe(200);
    expect(promoted.body.payload).toMatchObject({ uid: circuit.uid, primary_version_uid: v2.body.payload.uid });
    const listed = await t.rest('GET', `/circuits/${circuit.uid}/circuit-versions`);
    expect(listed.body.data.map((v: any) => [v.number, v.is_primary])).toEqual([
      [3, false],
      [2, true],
      [1, false],
    ]);

    // Errors: an invalid definition (the reason), a field of the wrong type, someone else, no token, a version of another circuit.
    const invalid = await t.rest('POST', `/circuits/${circuit.uid}/versions`, {
      token: owner.token,
      body: { query_schema: { type: 'object' }, steps: [{ id: 'x', kind: 'nope' }] },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.message).toMatch(/kind/);
    const badPrimary = await t.rest('POST', `/circuits/${circuit.uid}/versions`, {
      token: owner.token,
      body: { ...HELLO_DEFINITION, primary: 'yes' },
    });
    expect(badPrimary.body.error.message).toBe('primary must be boolean');
    expect(
      (await t.rest('POST', `/circuits/${circuit.uid}/versions`, { token: other.token, body: HELLO_DEFINITION }))
        .status,
    ).toBe(403);
    expect((await t.rest('POST', `/circuits/${circuit.uid}/versions`, { body: HELLO_DEFINITION })).status).toBe(401);
    expect(
      (await t.rest('PUT', `/circuits/${circuit.uid}/primary`, { token: other.token, body: { version_uid: v1.uid } }))
        .status,
    ).toBe(403);
    const {
      versions: [foreign],
    } = await circuitWithVersions(1);
    expect(
      (
        await t.rest('PUT', `/circuits/${circuit.uid}/primary`, {
          token: owner.token,
          body: { version_uid: foreign.uid },
        })
      ).status,
    ).toBe(404);
    expect(
      (await t.rest('PUT', `/circuits/${circuit.uid}/primary`, { token: owner.token, body: {} })).body.error.message,
    ).toBe('version_uid is required');
  });

  test('GET /users/me is the caller with credits; 401 without a token', async () => {
    const me = await t.rest('GET', '/users/me', { token: other.token });
    expect(me.status).toBe(200);
    expect(me.body.payload).toEqual({
      uid: other.user.uid,
      username: other.username,
      name: expect.any(String),
      bio: expect.any(String),
      is_private: false,
      is_admin: false,
      credits: 1000,
      credits_held: 0,
      created_at: expect.any(String),
    });
    expect((await t.rest('GET', '/users/me')).status).toBe(401);
    expect((await t.rest('GET', '/users/me', { token: 'cst_nope' })).status).toBe(401);
  });
});

describe('aliases', () => {
  test('PUT, GET, list, history, rollback by a PUT of an old set, DELETE', async () => {
    const {
      circuit,
      versions: [v1, v2, v3],
    } = await circuitWithVersions(3);
    const first = [{ version_uid: v1.uid, weight: 100 }];
    const second = [
      { version_uid: v1.uid, weight: 90 },
      { version_uid: v2.uid, weight: 10 },
    ];
    const third = [{ version_uid: v3.uid, weight: 100 }];

    const created = await put(circuit, 'prod', first);
    expect(created.status).toBe(200);
    expect(created.body.payload).toEqual({
      name: 'prod',
      circuit_uid: circuit.uid,
      routes: first,
      updated_at: expect.any(String),
    });
    expect((await put(circuit, 'prod', second)).body.payload.routes).toEqual(second);
    // The same routes again change nothing: no history row, the same updated_at.
    const same = await put(circuit, 'prod', second);
    expect((await put(circuit, 'prod', third)).body.payload.routes).toEqual(third);
    expect(same.body.payload.routes).toEqual(second);

    const got = await t.rest('GET', `/circuits/${circuit.uid}/aliases/prod`);
    expect(got.body.payload).toEqual({
      name: 'prod',
      circuit_uid: circuit.uid,
      routes: third,
      updated_at: expect.any(String),
    });
    const history = await t.rest('GET', `/circuits/${circuit.uid}/aliases/prod/history`);
    expect(history.status).toBe(200);
    expect(history.body.meta).toEqual({ total_count: 2, limit: 10, page: 1 });
    expect(history.body.data.map((h: any) => h.routes)).toEqual([second, first]);
    expect(history.body.data[0]).toEqual({
      routes: second,
      updated_at: same.body.payload.updated_at,
      replaced_at: got.body.payload.updated_at,
    });

    // Rollback: a PUT of the route set it had before; the one it replaces joins the history.
    const rolledBack = await put(circuit, 'prod', history.body.data[0].routes);
    expect(rolledBack.body.payload.routes).toEqual(second);
    const after = await t.rest('GET', `/circuits/${circuit.uid}/aliases/prod/history`, { headers: {} });
    expect(after.body.data.map((h: any) => h.routes)).toEqual([third, second, first]);

    await put(circuit, 'canary', [{ version_uid: v2.uid, weight: 100 }]);
    const list = await t.rest('GET', `/circuits/${circuit.uid}/aliases?limit=1`);
    expect(list.body).toEqual({
      meta: { total_count: 2, limit: 1, page: 1 },
      data: [expect.objectContaining({ name: 'canary' })],
    });

    // GraphQL mirrors it.
    const gql = await t.gql(
      `query($uid: ID!) { circuit(uid: $uid) { aliases { name routes { versionUid weight } } } }`,
      { uid: circuit.uid },
    );
    expect(gql.data.circuit.aliases.map((a: any) => a.name)).toEqual(['canary', 'prod']);

    const deleted = await t.rest('DELETE', `/circuits/${circuit.uid}/aliases/canary`, { token: owner.token });
    expect(deleted.status).toBe(200);
    expect(deleted.body.payload.name).toBe('canary');
    expect((await t.rest('GET', `/circuits/${circuit.uid}/aliases/canary`)).status).toBe(404);
    expect((await t.rest('GET', `/circuits/${circuit.uid}/aliases/canary/history`)).status).toBe(404);
    expect((await t.rest('DELETE', `/circuits/${circuit.uid}/aliases/canary`, { token: owner.token })).status).toBe(
      404,
    );
    expect((await t.rest('DELETE', `/circuits/${circuit.uid}/aliases/prod`, { token: other.token })).status).toBe(403);
    expect((await put(circuit, 'prod', first, other.token)).status).toBe(403);
    expect((await t.rest('PUT', `/circuits/${circuit.uid}/aliases/prod`, { body: { routes: first } })).status).toBe(
      401,
    );
  });

  test('every invalid PUT is 400 naming the field', async () => {
    const {
      circuit,
      versions: [v1, v2],
    } = await circuitWithVersions(2);
    const {
      versions: [foreign],
    } = await circuitWithVersions(1);
    const ok = { version_uid: v1.uid, weight: 100 };
    const cases: Array<[string, string, unknown, RegExp]> = [
      ['a name with capitals', 'Prod', [ok], /^name must /],
      ['a name starting with a digit', '1prod', [ok], /^name must /],
      ['a name of 33 characters', `a${'b'.repeat(32)}`, [ok], /^name must /],
      ['0 routes', 'x', [], /^routes must NOT have fewer than 1 items/],
      [
        '6 routes',
        'x',
        [10, 10, 20, 20, 20, 20].map((weight) => ({ version_uid: v1.uid, weight })),
        /^routes must NOT have more than 5 items/,
      ],
      [
        'weights summing to 90',
        'x',
        [
          { version_uid: v1.uid, weight: 50 },
          { version_uid: v2.uid, weight: 40 },
        ],
        /^routes weights must add up to 100, got 90/,
      ],
      [
        'weights summing to 110',
        'x',
        [
          { version_uid: v1.uid, weight: 60 },
          { version_uid: v2.uid, weight: 50 },
        ],
        /^routes weights must add up to 100, got 110/,
      ],
      [
        'weight 0',
        'x',
        [
          { version_uid: v1.uid, weight: 0 },
          { version_uid: v2.uid, weight: 100 },
        ],
        /^routes\[0\]\.weight must be >= 1/,
      ],
      ['weight 101', 'x', [{ version_uid: v1.uid, weight: 101 }], /^routes\[0\]\.weight must be <= 100/],
      [
        'weight 1.5',
        'x',
        [
          { version_uid: v1.uid, weight: 98.5 },
          { version_uid: v2.uid, weight: 1.5 },
        ],
        /^routes\[0\]\.weight must be integer/,
      ],
      [
        'a version of another circuit',
        'x',
        [
          { version_uid: v1.uid, weight: 50 },
          { version_uid: foreign.uid, weight: 50 },
        ],
        /^routes\[1\]\.version_uid is not a version of this circuit/,
      ],
      [
        'an unknown version',
        'x',
        [{ version_uid: '00000000-0000-4000-8000-000000000000', weight: 100 }],
        /^routes\[0\]\.version_uid is not a version of this circuit/,
      ],
      [
        'a malformed version uid',
        'x',
        [{ version_uid: 'v1', weight: 100 }],
        /^routes\[0\]\.version_uid is not a version of this circuit/,
      ],
      [
        'a version twice',
        'x',
        [
          { version_uid: v1.uid, weight: 50 },
          { version_uid: v1.uid, weight: 50 },
        ],
        /^routes\[1\]\.version_uid repeats routes\[0\]/,
      ],
      ['a route without weight', 'x', [{ version_uid: v1.uid }], /^routes\[0\]\.weight is required/],
      ['an unknown route field', 'x', [{ ...ok, share: 1 }], /^Unknown field: routes\[0\]\.share/],
    ];
    const answers = await Promise.all(cases.map(([, name, routes]) => put(circuit, name, routes)));
    const seen = cases.map(([what], i) => [
      what,
      answers[i].status,
      answers[i].body.error?.code,
      answers[i].body.error?.message,
    ]);
    expect(seen).toEqual(
      cases.map(([what, , , message]) => [what, 400, 'BadClientData', expect.stringMatching(message)]),
    );
    expect(
      (await t.rest('PUT', `/circuits/${circuit.uid}/aliases/x`, { token: owner.token, body: {} })).body.error.message,
    ).toBe('routes is required');
    // Nothing was written.
    expect((await t.rest('GET', `/circuits/${circuit.uid}/aliases`)).body.meta.total_count).toBe(0);

    // GraphQL: the same checks, the same code.
    const gql = await t.gql(
      `mutation($c: ID!, $r: [CircuitAliasRouteInput!]!) { setCircuitAlias(circuitUid: $c, name: "x", routes: $r) { name } }`,
      { c: circuit.uid, r: [{ versionUid: v1.uid, weight: 60 }] },
      owner.token,
    );
    expect(gql.code).toBe('BadClientData');
    expect(gql.errors![0].message).toMatch(/add up to 100/);
  });

  test('a private circuit’s aliases answer as the circuit does', async () => {
    const {
      circuit,
      versions: [v1],
    } = await circuitWithVersions(1, { isPrivate: true });
    expect((await put(circuit, 'prod', [{ version_uid: v1.uid, weight: 100 }])).status).toBe(200);
    for (const path of ['', '/aliases', '/aliases/prod', '/aliases/prod/history', '/aliases/none']) {
      const anonymous = await t.rest('GET', `/circuits/${circuit.uid}${path}`);
      const stranger = await t.rest('GET', `/circuits/${circuit.uid}${path}`, { token: other.token });
      const mine = await t.rest('GET', `/circuits/${circuit.uid}${path}`, { token: owner.token });
      expect([path, anonymous.status, stranger.status, mine.status]).toEqual([
        path,
        401,
        403,
        path === '/aliases/none' ? 404 : 200,
      ]);
      expect(JSON.stringify(stranger.body)).not.toContain(v1.uid);
    }
    const listed = await t.gql(
      `query($u: String!) { userCircuits(username: $u) { items { name aliases { name } } } }`,
      { u: owner.username },
      other.token,
    );
    expect(listed.data.userCircuits.items.map((c: any) => c.name)).not.toContain(circuit.name);
  });
});

describe('queries through an alias', () => {
  test('context.alias with context.version is 400; an unknown alias is 404; GraphQL alias: works too', async () => {
    const {
      circuit,
      versions: [v1],
      adaptorUid,
    } = await circuitWithVersions(1);
    await put(circuit, 'prod', [{ version_uid: v1.uid, weight: 100 }]);
    const both = await submitRun(t, owner.token, adaptorUid, {
      input: { name: 'a' },
      context: { alias: 'prod', version: v1.uid },
    });
    expect(both.status).toBe(400);
    expect(both.body.error).toEqual({
      code: 'BadClientData',
      message: expect.stringMatching(/context\.version or context\.alias, not both/),
    });
    const unknown = await submitRun(t, owner.token, adaptorUid, {
      input: { name: 'a' },
      context: { alias: 'staging' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toBe('Alias not found');
    const badInput = await submitRun(t, owner.token, adaptorUid, { input: {}, context: { alias: 'prod' } });
    expect(badInput.status).toBe(400);

    const gql = await t.gql(
      `mutation($a: ID!) { queryCircuitAdaptor(adaptorUid: $a, input: {name: "g"}, alias: "prod") { uid alias circuitVersionUid } }`,
      { a: adaptorUid },
      owner.token,
    );
    expect(gql.data.queryCircuitAdaptor).toEqual({ uid: expect.any(String), alias: 'prod', circuitVersionUid: v1.uid });
  });

  test('the run carries alias beside circuit_version_uid; runs that name no alias have none', async () => {
    const {
      circuit,
      versions: [v1, v2],
      adaptorUid,
    } = await circuitWithVersions(2);
    await put(circuit, 'next', [{ version_uid: v2.uid, weight: 100 }]);
    const viaAlias = await submitRun(t, owner.token, adaptorUid, { input: { name: 'a' }, context: { alias: 'next' } });
    expect(viaAlias.status).toBe(200);
    const run = await t.rest('GET', `/circuit-runs/${viaAlias.body.payload.uid}`, { token: owner.token });
    expect(run.body.payload).toMatchObject({ circuit_version_uid: v2.uid, alias: 'next', state: 'PROVISIONED' });

    const plain = await submitRun(t, owner.token, adaptorUid, { input: { name: 'a' } });
    const plainRun = await t.rest('GET', `/circuit-runs/${plain.body.payload.uid}`, { token: owner.token });
    expect(plainRun.body.payload.circuit_version_uid).toBe(v1.uid);
    expect(plainRun.body.payload).not.toHaveProperty('alias');
    const gql = await t.gql(
      `query($u: ID!) { circuitRun(uid: $u) { alias circuitVersionUid } }`,
      { u: viaAlias.body.payload.uid },
      owner.token,
    );
    expect(gql.data.circuitRun).toEqual({ alias: 'next', circuitVersionUid: v2.uid });

    // An alias deleted later: its runs keep its name.
    await t.rest('DELETE', `/circuits/${circuit.uid}/aliases/next`, { token: owner.token });
    expect(
      (await t.rest('GET', `/circuit-runs/${viaAlias.body.payload.uid}`, { token: owner.token })).body.payload.alias,
    ).toBe('next');
  });

  test('2,000 queries through a 90/10 alias land within 4.5 σ of 10% on the second version', async () => {
    const {
      circuit,
      versions: [v1, v2],
      adaptorUid,
    } = await circuitWithVersions(2);
    await put(circuit, 'canary', [
      { version_uid: v1.uid, weight: 90 },
      { version_uid: v2.uid, weight: 10 },
    ]);
    const total = 2_000;
    const uids: string[] = [];
    for (let sent = 0; sent < total; sent += 50) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () =>
          submitRun(t, owner.token, adaptorUid, { input: { name: 'x' }, context: { alias: 'canary' } }),
        ),
      );
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        uids.push(answer.body.payload.uid);
      }
    }
    const rows = await Circuit.sequelize!.query<{ circuit_version_uid: string; alias: string; n: string }>(
      'SELECT circuit_version_uid, alias, count(*) AS n FROM circuit_runs WHERE uid = ANY($1::uuid[]) GROUP BY 1, 2',
      { bind: [uids], type: QueryTypes.SELECT },
    );
    const counts = Object.fromEntries(rows.map((r) => [r.circuit_version_uid, Number(r.n)]));
    expect(rows.every((r) => r.alias === 'canary')).toBe(true);
    expect((counts[v1.uid] ?? 0) + (counts[v2.uid] ?? 0)).toBe(total);
    const sigma = Math.sqrt(total * 0.1 * 0.9); // ≈ 13.4
    expect(Math.abs((counts[v2.uid] ?? 0) - total * 0.1)).toBeLessThanOrEqual(4.5 * sigma);
  }, 120_000);

  test('the same Idempotency-Key always draws the same version, whoever sends it', async () => {
    const {
      circuit,
      versions: [v1, v2],
      adaptorUid,
    } = await circuitWithVersions(2);
    const routes = [
      { version_uid: v1.uid, weight: 50 },
      { version_uid: v2.uid, weight: 50 },
    ];
    await put(circuit, 'split', routes);
    const callers = [owner, other, await makeUser()];
    const drawn = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const key = `key-${i}`;
      const answers = await Promise.all(
        callers.map((caller) =>
          submitRun(
            t,
            caller.token,
            adaptorUid,
            { input: { name: 'x' }, context: { alias: 'split' } },
            { 'Idempotency-Key': key },
          ),
        ),
      );
      const versions = await Promise.all(
        answers.map(async (answer) => (await versionOfRun(answer.body.payload.uid)).circuit_version_uid),
      );
      // One version per key, and the one the key's point falls on.
      expect(new Set(versions).size).toBe(1);
      expect(versions[0]).toBe(routeAt(routes, drawPoint(key)).version_uid);
      drawn.add(versions[0]);
      // A retry by the same caller is the same run.
      const again = await submitRun(
        t,
        owner.token,
        adaptorUid,
        { input: { name: 'x' }, context: { alias: 'split' } },
        { 'Idempotency-Key': key },
      );
      expect(again.body.payload.uid).toBe(answers[0].body.payload.uid);
    }
    // Twelve keys on a 50/50 split reach both versions (the chance they would not is 2 × 2⁻¹²).
    expect(drawn).toEqual(new Set([v1.uid, v2.uid]));
    // The same key with another alias (or none) is another request: 422.
    const conflict = await submitRun(
      t,
      owner.token,
      adaptorUid,
      { input: { name: 'x' } },
      { 'Idempotency-Key': 'key-0' },
    );
    expect(conflict.status).toBe(422);
  });
});

test('drawPoint: a key maps to one point in [0, 100); routeAt takes consecutive shares', () => {
  expect(drawPoint('abc')).toBe(drawPoint('abc'));
  for (const key of ['a', 'b', 'c', 'd']) expect(drawPoint(key)).toBeGreaterThanOrEqual(0);
  for (const key of ['a', 'b', 'c', 'd']) expect(drawPoint(key)).toBeLessThan(100);
  const routes = [
    { version_uid: 'a', weight: 90 },
    { version_uid: 'b', weight: 10 },
  ];
  expect(routeAt(routes, 0).version_uid).toBe('a');
  expect(routeAt(routes, 89.999).version_uid).toBe('a');
  expect(routeAt(routes, 90).version_uid).toBe('b');
  expect(routeAt(routes, 99.999).version_uid).toBe('b');
});

describe('/settings → Circuits', () => {
  /** A minimal browser: keeps the session cookie, never follows redirects. */
  function webClient() {
    let cookie: string | null = null;
    const request = async (method: string, path: string, form?: Record<string, string>) => {
      const res = await fetch(`${t.url}${path}`, {
        method,
        redirect: 'manual',
        headers: cookie ? { cookie } : {},
        body: form ? new URLSearchParams(form) : undefined,
      });
      const setCookie = res.headers.get('set-cookie');
      if (setCookie) cookie = setCookie.split(';')[0];
      return { status: res.status, text: await res.text(), location: res.headers.get('location') };
    };
    const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)![1];
    return {
      request,
      csrfOf,
      async post(path: string, fields: Record<string, string>, csrfFrom: string) {
        return request('POST', path, { ...fields, _csrf: csrfOf((await request('GET', csrfFrom)).text) });
      },
    };
  }

  test('lists the circuits’ aliases and rolls one back with the same command as a PUT; someone else’s cannot be rolled back', async () => {
    const user = await createUser({
      username: `web${Date.now() % 100000}`,
      password: 'correct horse battery',
      credits: 10,
    });
    const me: TestUser = { user, token: '', username: user.username };
    const { circuit } = await makeCircuit(me, { name: 'shop' });
    const v2 = await publishAgain(me, circuit);
    const first = [{ version_uid: circuit.primary_version_uid!, weight: 100 }];
    await setCircuitAlias(Circuit.sequelize!, circuit, 'prod', first);
    await setCircuitAlias(Circuit.sequelize!, circuit, 'prod', [
      { version_uid: circuit.primary_version_uid!, weight: 80 },
      { version_uid: v2.uid, weight: 20 },
    ]);

    const web = webClient();
    expect(
      (
        await web.post(
          '/settings/sign-in',
          { username: user.username, password: 'correct horse battery' },
          '/settings/sign-in',
        )
      ).status,
    ).toBe(303);
    const page = await web.request('GET', '/settings/circuits');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<code>prod</code>');
    expect(page.text).toMatch(/data-alias-routes>.*v1<\/span> 80%, .*v2<\/span> 20%/s);
    const historyUid = /data-history-uid="([^"]+)"/.exec(page.text)![1];

    // Without the CSRF token nothing changes.
    const forged = await web.request('POST', '/settings/circuits/aliases/rollback', {
      circuit_uid: circuit.uid,
      name: 'prod',
      history_uid: historyUid,
    });
    expect(forged.status).toBe(403);

    const rolled = await web.post(
      '/settings/circuits/aliases/rollback',
      { circuit_uid: circuit.uid, name: 'prod', history_uid: historyUid },
      '/settings/circuits',
    );
    expect(rolled).toMatchObject({ status: 303, location: '/settings/circuits' });
    const after = await web.request('GET', '/settings/circuits');
    expect(after.text).toContain('is back on the routes it had then');
    const alias = await t.rest('GET', `/circuits/${circuit.uid}/aliases/prod`);
    expect(alias.body.payload.routes).toEqual(first);
    const history = await t.rest('GET', `/circuits/${circuit.uid}/aliases/prod/history`);
    expect(history.body.data.map((h: any) => h.routes)).toEqual([
      [
        { version_uid: circuit.primary_version_uid, weight: 80 },
        { version_uid: v2.uid, weight: 20 },
      ],
      first,
    ]);

    // Another user's circuit: refused as no circuit at all, nothing written.
    const { circuit: theirs, versions } = await circuitWithVersions(2);
    await put(theirs, 'prod', [{ version_uid: versions[0].uid, weight: 100 }]);
    await put(theirs, 'prod', [{ version_uid: versions[1].uid, weight: 100 }]);
    const theirEntry = await CircuitAliasHistory.findOne({ where: { circuit_uid: theirs.uid, name: 'prod' } });
    await web.post(
      '/settings/circuits/aliases/rollback',
      { circuit_uid: theirs.uid, name: 'prod', history_uid: theirEntry!.uid },
      '/settings/circuits',
    );
    expect((await web.request('GET', '/settings/circuits')).text).toContain('There is no such circuit of yours.');
    expect((await t.rest('GET', `/circuits/${theirs.uid}/aliases/prod`)).body.payload.routes).toEqual([
      { version_uid: versions[1].uid, weight: 100 },
    ]);
  });
});
