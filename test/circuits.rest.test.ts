import crypto from 'node:crypto';
import { Circuit, CircuitEmbed, CircuitVersion } from '../src/models';
import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeCircuit, makeUser, TestUser } from './support/factories';
import { makeEmbeddingCircuit, publishAgain, star } from './support/circuit-factories';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const NO_SUCH_UID = '00000000-0000-4000-8000-000000000000';

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(typeof res.body.error.message).toBe('string');
}

describe('GET /circuits/:circuit_uid/primary', () => {
  test('returns the primary version uid, following setPrimary', async () => {
    const owner = await makeUser();
    const { circuit, version } = await makeCircuit(owner);
    const res = await t.rest('GET', `/circuits/${circuit.uid}/primary`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'success', payload: version!.uid });

    const v2 = await publishAgain(owner, circuit, HELLO_DEFINITION, true);
    expect((await t.rest('GET', `/circuits/${circuit.uid}/primary`)).body.payload).toBe(v2.uid);
  });

  test('404 without versions, for unknown and malformed uids', async () => {
    const owner = await makeUser();
    const { circuit } = await makeCircuit(owner, {}, null);
    expectError(await t.rest('GET', `/circuits/${circuit.uid}/primary`, { token: owner.token }), 404, 'NotFound');
    expectError(await t.rest('GET', `/circuits/${NO_SUCH_UID}/primary`), 404, 'NotFound');
    expectError(await t.rest('GET', '/circuits/not-a-uid/primary'), 404, 'NotFound');
  });

  test('private needs the owner; protected is open to any token holder (they may run it)', async () => {
    const owner = await makeUser();
    const other = await makeUser();
    const { circuit: priv } = await makeCircuit(owner, { isPrivate: true });
    const { circuit: prot, version } = await makeCircuit(owner, { isProtected: true });
    expectError(await t.rest('GET', `/circuits/${priv.uid}/primary`), 401, 'Unauthorized');
    expectError(await t.rest('GET', `/circuits/${priv.uid}/primary`, { token: other.token }), 403, 'NotAllowed');
    expect((await t.rest('GET', `/circuits/${priv.uid}/primary`, { token: owner.token })).status).toBe(200);
    expectError(await t.rest('GET', `/circuits/${prot.uid}/primary`), 401, 'Unauthorized');
    expect((await t.rest('GET', `/circuits/${prot.uid}/primary`, { token: other.token })).body.payload).toBe(
      version!.uid,
    );
  });
});

describe('GET /users/:username/circuits', () => {
  let owner: TestUser;
  let other: TestUser;
  beforeAll(async () => {
    owner = await makeUser();
    other = await makeUser();
    await makeCircuit(owner, { name: 'first' }, null);
    await makeCircuit(owner, { name: 'second', isProtected: true }, null);
    await makeCircuit(owner, { name: 'third', isPrivate: true }, null);
  });

  test('anyone sees public and protected circuits, newest first, as a page', async () => {
    for (const token of [undefined, other.token]) {
      const res = await t.rest('GET', `/users/${owner.username}/circuits`, { token });
      expect(res.status).toBe(200);
      expect(res.body.meta).toEqual({ total_count: 2, limit: 10, page: 1 });
      expect(res.body.data.map((c: any) => c.name)).toEqual(['second', 'first']);
      expect(res.body.data[0]).toMatchObject({ username: owner.username, is_protected: true, is_private: false });
    }
  });

  test("the owner's token adds private circuits", async () => {
    const res = await t.rest('GET', `/users/${owner.username}/circuits`, { token: owner.token });
    expect(res.body.meta.total_count).toBe(3);
    expect(res.body.data.map((c: any) => c.name)).toEqual(['third', 'second', 'first']);
  });

  test('limit and page window the list; the limit is capped at 100', async () => {
    const res = await t.rest('GET', `/users/${owner.username}/circuits?limit=1&page=2`, { token: owner.token });
    expect(res.body.meta).toEqual({ total_count: 3, limit: 1, page: 2 });
    expect(res.body.data.map((c: any) => c.name)).toEqual(['second']);
    expect((await t.rest('GET', `/users/${owner.username}/circuits?limit=1000`)).body.meta.limit).toBe(100);
    expect((await t.rest('GET', `/users/${owner.username}/circuits?page=9`)).body.data).toEqual([]);
  });

  test('bad limit or page is 400; unknown user is 404; a bad token is 401', async () => {
    for (const q of [
      'limit=abc',
      'limit=0',
      'limit=-1',
      'page=0',
      'page=1.5',
      'limit=1&limit=2',
      'limit=99999999999',
      'page=1e3',
    ]) {
      expectError(await t.rest('GET', `/users/${owner.username}/circuits?${q}`), 400, 'BadClientData');
    }
    expectError(await t.rest('GET', '/users/nobody-here/circuits'), 404, 'NotFound');
    expectError(await t.rest('GET', `/users/${owner.username}/circuits`, { token: 'cst_bogus' }), 401, 'Unauthorized');
  });
});

describe('GET /circuits/:circuit_uid/circuit-versions', () => {
  test('lists versions newest first; the first is primary', async () => {
    const owner = await makeUser();
    const { circuit, version } = await makeCircuit(owner);
    await publishAgain(owner, circuit);
    await publishAgain(owner, circuit);
    const res = await t.rest('GET', `/circuits/${circuit.uid}/circuit-versions`);
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ total_count: 3, limit: 10, page: 1 });
    expect(res.body.data.map((v: any) => v.number)).toEqual([3, 2, 1]);
    expect(res.body.data.map((v: any) => v.is_primary)).toEqual([false, false, true]);
    expect(res.body.data[2]).toMatchObject({
      uid: version!.uid,
      circuit_uid: circuit.uid,
      is_deprecated: false,
      definition: HELLO_DEFINITION,
    });

    const page2 = await t.rest('GET', `/circuits/${circuit.uid}/circuit-versions?limit=2&page=2`);
    expect(page2.body.meta).toEqual({ total_count: 3, limit: 2, page: 2 });
    expect(page2.body.data.map((v: any) => v.number)).toEqual([1]);
  });

  test('needs read permission; bad uid, limit and page are rejected', async () => {
    const owner = await makeUser();
    const other = await makeUser();
    const { circuit: prot } = await makeCircuit(owner, { isProtected: true });
    expectError(await t.rest('GET', `/circuits/${prot.uid}/circuit-versions`), 401, 'Unauthorized');
    expectError(
      await t.rest('GET', `/circuits/${prot.uid}/circuit-versions`, { token: other.token }),
      403,
      'NotAllowed',
    );
    expect((await t.rest('GET', `/circuits/${prot.uid}/circuit-versions`, { token: owner.token })).status).toBe(200);
    expectError(await t.rest('GET', '/circuits/nope/circuit-versions'), 404, 'NotFound');
    expectError(await t.rest('GET', `/circuits/${NO_SUCH_UID}/circuit-versions`), 404, 'NotFound');
    expectError(
      await t.rest('GET', `/circuits/${prot.uid}/circuit-versions?limit=x`, { token: owner.token }),
      400,
      'BadClientData',
    );
    expectError(
      await t.rest('GET', `/circuits/${prot.uid}/circuit-versions?page=0`, { token: owner.token }),
      400,
      'BadClientData',
    );
  });
});

describe('PUT /users/:username/circuits/:circuit_name', () => {
  test('changes only the fields sent', async () => {
    const owner = await makeUser();
    const { circuit } = await makeCircuit(owner, { name: 'upd', description: 'old', licenseType: 'MIT' }, null);
    const path = `/users/${owner.username}/circuits/upd`;

    const r1 = await t.rest('PUT', path, { token: owner.token, body: { description: 'new' } });
    expect(r1.status).toBe(200);
    expect(r1.body.payload).toMatchObject({
      uid: circuit.uid,
      description: 'new',
      license_type: 'MIT',
      is_private: false,
      is_protected: false,
    });

    const r2 = await t.rest('PUT', path, {
      token: owner.token,
      body: { is_protected: true, license_type: 'Apache-2.0' },
    });
    expect(r2.body.payload).toMatchObject({
      description: 'new',
      license_type: 'Apache-2.0',
      is_private: false,
      is_protected: true,
    });

    const r3 = await t.rest('PUT', path, { token: owner.token, body: { is_private: true } });
    expect(r3.body.payload).toMatchObject({ description: 'new', is_private: true, is_protected: true });

    const r4 = await t.rest('PUT', path, { token: owner.token, body: {} });
    expect(r4.body.payload).toMatchObject({ description: 'new', license_type: 'Apache-2.0', is_private: true });
    expect((await t.rest('GET', `/circuits/${circuit.uid}`, { token: owner.token })).body.payload.description).toBe(
      'new',
    );
  });

  test('rejects wrong types, unknown fields, nulls and non-object bodies with 400', async () => {
    const owner = await makeUser();
    await makeCircuit(owner, { name: 'strict' }, null);
    const path = `/users/${owner.username}/circuits/strict`;
    const bodies: unknown[] = [
      { is_private: 'yes' },
      { description: 5 },
      { license_type: [] },
      { is_protected: 1 },
      { name: 'rename' },
      { user_circuit_metric_uid: NO_SUCH_UID },
      { is_private: null },
      { description: null },
      [1, 2],
    ];
    for (const body of bodies)
      expectError(await t.rest('PUT', path, { token: owner.token, body }), 400, 'BadClientData');
    expectError(await t.rest('PUT', path, { token: owner.token, rawBody: '{"description":' }), 400, 'BadClientData');
    expectError(
      await t.rest('PUT', path, { token: owner.token, body: { description: 'x'.repeat(2001) } }),
      400,
      'BadClientData',
    );
  });

  test('only the owner may update', async () => {
    const owner = await makeUser();
    const other = await makeUser({ isAdmin: true });
    await makeCircuit(owner, { name: 'mine' }, null);
    const path = `/users/${owner.username}/circuits/mine`;
    expectError(await t.rest('PUT', path, { body: { description: 'x' } }), 401, 'Unauthorized');
    expectError(await t.rest('PUT', path, { token: other.token, body: { description: 'x' } }), 403, 'NotAllowed');
    expectError(
      await t.rest('PUT', `/users/${owner.username}/circuits/missing`, { token: owner.token, body: {} }),
      404,
      'NotFound',
    );
    expectError(
      await t.rest('PUT', `/users/nobody-here/circuits/mine`, { token: owner.token, body: {} }),
      404,
      'NotFound',
    );
  });
});

describe('PUT /circuits/:circuit_uid/deprecate', () => {
  test('deprecates the circuit and all versions; later versions too; reads carry the notice', async () => {
    const owner = await makeUser();
    const { circuit } = await makeCircuit(owner);
    await publishAgain(owner, circuit);
    const before = await t.rest('GET', `/circuits/${circuit.uid}`);
    expect(before.body.notices).toBeUndefined();
    expect(before.headers.get('deprecation')).toBeNull();

    const res = await t.rest('PUT', `/circuits/${circuit.uid}/deprecate`, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body.payload).toMatchObject({ uid: circuit.uid, is_deprecated: true });
    expect(res.body.notices).toEqual([{ code: 'deprecated', message: expect.stringContaining(circuit.name) }]);
    // RFC 9745: `@` + the Unix time (seconds) of the deprecation, which a second PUT does not move.
    const deprecatedAt = (await Circuit.findByPk(circuit.uid))!.deprecated_at!;
    expect(res.headers.get('deprecation')).toBe(`@${Math.floor(deprecatedAt.getTime() / 1000)}`);
    expect(Math.abs(deprecatedAt.getTime() - Date.now())).toBeLessThan(60_000);

    // idempotent
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const again = await t.rest('PUT', `/circuits/${circuit.uid}/deprecate`, { token: owner.token });
    expect(again.status).toBe(200);
    expect(again.headers.get('deprecation')).toBe(res.headers.get('deprecation'));

    await publishAgain(owner, circuit);
    const versions = await t.rest('GET', `/circuits/${circuit.uid}/circuit-versions`);
    expect(versions.body.data.map((v: any) => v.is_deprecated)).toEqual([true, true, true]);
    expect(versions.headers.get('deprecation')).toMatch(/^@\d+$/);

    for (const path of [`/circuits/${circuit.uid}`, `/users/${owner.username}/circuits/${circuit.name}`]) {
      const got = await t.rest('GET', path);
      expect(got.body.payload.is_deprecated).toBe(true);
      expect(got.body.notices[0].code).toBe('deprecated');
      expect(got.headers.get('deprecation')).toMatch(/^@\d+$/);
    }
    const primary = await t.rest('GET', `/circuits/${circuit.uid}/primary`);
    expect(primary.body.notices[0].code).toBe('deprecated');
  });

  test('owner only; unknown and malformed uids 404; a body is rejected', async () => {
    const owner = await makeUser();
    const admin = await makeUser({ isAdmin: true });
    const { circuit } = await makeCircuit(owner, {}, null);
    expectError(await t.rest('PUT', `/circuits/${circuit.uid}/deprecate`), 401, 'Unauthorized');
    expectError(await t.rest('PUT', `/circuits/${circuit.uid}/deprecate`, { token: admin.token }), 403, 'NotAllowed');
    expectError(await t.rest('PUT', `/circuits/${NO_SUCH_UID}/deprecate`, { token: owner.token }), 404, 'NotFound');
    expectError(await t.rest('PUT', '/circuits/123/deprecate', { token: owner.token }), 404, 'NotFound');
    expectError(
      await t.rest('PUT', `/circuits/${circuit.uid}/deprecate`, { token: owner.token, body: { reason: 'old' } }),
      400,
      'BadClientData',
    );
    expect((await Circuit.findByPk(circuit.uid))!.is_deprecated).toBe(false);
  });
});

describe('stars', () => {
  test('star and unstar are idempotent and keep star_count exact', async () => {
    const owner = await makeUser();
    const fan = await makeUser();
    const fan2 = await makeUser();
    const { circuit } = await makeCircuit(owner, {}, null);
    const path = `/users/${owner.username}/circuits/${circuit.name}/stars`;

    expect((await t.rest('GET', path, { token: fan.token })).body).toEqual({ status: 'success', payload: false });
    expect((await t.rest('POST', path, { token: fan.token })).body.payload).toEqual({ starred: true, star_count: 1 });
    expect((await t.rest('POST', path, { token: fan.token })).body.payload).toEqual({ starred: true, star_count: 1 });
    expect((await t.rest('GET', path, { token: fan.token })).body.payload).toBe(true);
    expect((await t.rest('GET', path, { token: fan2.token })).body.payload).toBe(false);
    await Promise.all([t.rest('POST', path, { token: fan2.token }), t.rest('POST', path, { token: fan2.token })]);
    expect((await t.rest('GET', `/circuits/${circuit.uid}`)).body.payload.star_count).toBe(2);

    expect((await t.rest('DELETE', path, { token: fan.token })).body.payload).toEqual({
      starred: false,
      star_count: 1,
    });
    expect((await t.rest('DELETE', path, { token: fan.token })).body.payload).toEqual({
      starred: false,
      star_count: 1,
    });
    expect((await t.rest('GET', path, { token: fan.token })).body.payload).toBe(false);
    expect((await Circuit.findByPk(circuit.uid))!.star_count).toBe(1);
  });

  test('need a token and list permission; unknown circuit 404; a body is rejected', async () => {
    const owner = await makeUser();
    const other = await makeUser();
    const { circuit: priv } = await makeCircuit(owner, { isPrivate: true }, null);
    const { circuit: prot } = await makeCircuit(owner, { isProtected: true }, null);
    const privPath = `/users/${owner.username}/circuits/${priv.name}/stars`;
    for (const method of ['GET', 'POST', 'DELETE']) {
      expectError(await t.rest(method, privPath), 401, 'Unauthorized');
      expectError(await t.rest(method, privPath, { token: other.token }), 403, 'NotAllowed');
      expectError(
        await t.rest(method, `/users/${owner.username}/circuits/none/stars`, { token: other.token }),
        404,
        'NotFound',
      );
    }
    expect(
      (await t.rest('POST', `/users/${owner.username}/circuits/${prot.name}/stars`, { token: other.token })).status,
    ).toBe(200);
    expectError(
      await t.rest('POST', `/users/${owner.username}/circuits/${prot.name}/stars`, {
        token: other.token,
        body: { x: 1 },
      }),
      400,
      'BadClientData',
    );
  });

  test('GET /users/stars: newest first, only still-listable circuits, pages of at most 50', async () => {
    const owner = await makeUser();
    const fan = await makeUser();
    const circuits: Circuit[] = [];
    for (let i = 0; i < 55; i++)
      circuits.push((await makeCircuit(owner, { name: `s${String(i).padStart(2, '0')}` }, null)).circuit);
    for (const c of circuits) await star(fan, c);

    const res = await t.rest('GET', '/users/stars', { token: fan.token });
    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ total_count: 55, limit: 50, page: 1 });
    expect(res.body.data).toHaveLength(50);
    expect(res.body.data[0].name).toBe('s54');
    expect(res.body.data[49].name).toBe('s05');
    expect((await t.rest('GET', '/users/stars?limit=500', { token: fan.token })).body.meta.limit).toBe(50);
    const page2 = await t.rest('GET', '/users/stars?page=2', { token: fan.token });
    expect(page2.body.data.map((c: any) => c.name)).toEqual(['s04', 's03', 's02', 's01', 's00']);

    await circuits[54].update({ is_private: true });
    const after = await t.rest('GET', '/users/stars?limit=3', { token: fan.token });
    expect(after.body.meta).toEqual({ total_count: 54, limit: 3, page: 1 });
    expect(after.body.data.map((c: any) => c.name)).toEqual(['s53', 's52', 's51']);

    expectError(await t.rest('GET', '/users/stars'), 401, 'Unauthorized');
    expectError(await t.rest('GET', '/users/stars?limit=0', { token: fan.token }), 400, 'BadClientData');
  });
});

describe('GET /users/:username/circuits/:circuit_name/ping', () => {
  test('is whether the caller may read the circuit; unknown is false; a bad token is 401', async () => {
    const owner = await makeUser();
    const other = await makeUser();
    const { circuit: pub } = await makeCircuit(owner, {}, null);
    const { circuit: priv } = await makeCircuit(owner, { isPrivate: true }, null);
    const ping = (name: string, token?: string) =>
      t.rest('GET', `/users/${owner.username}/circuits/${name}/ping`, { token });
    expect((await ping(pub.name)).body).toEqual({ status: 'success', payload: true });
    expect((await ping(priv.name)).body.payload).toBe(false);
    expect((await ping(priv.name, other.token)).body.payload).toBe(false);
    expect((await ping(priv.name, owner.token)).body.payload).toBe(true);
    expect((await ping('no-such-circuit')).body).toEqual({ status: 'success', payload: false });
    expect((await t.rest('GET', '/users/nobody-here/circuits/x/ping')).body.payload).toBe(false);
    expectError(await ping(pub.name, 'cst_invalid'), 401, 'Unauthorized');
  });
});

describe('GET /users/:username/circuits/:circuit_name/embeds', () => {
  test('lists distinct embedding circuits the caller may list', async () => {
    const owner = await makeUser();
    const a = await makeUser();
    const b = await makeUser();
    const { circuit: target } = await makeCircuit(owner);
    const embA = await makeEmbeddingCircuit(a, target, { name: 'uses-target' });
    await publishAgain(a, embA, (await CircuitVersion.findByPk(embA.primary_version_uid!))!.definition);
    const embB = await makeEmbeddingCircuit(b, target, { name: 'secret-user', isPrivate: true });

    const path = `/users/${owner.username}/circuits/${target.name}/embeds`;
    const anon = await t.rest('GET', path);
    expect(anon.status).toBe(200);
    expect(anon.body.meta).toEqual({ total_count: 1, limit: 10, page: 1 });
    expect(anon.body.data.map((c: any) => c.uid)).toEqual([embA.uid]);

    const asB = await t.rest('GET', path, { token: b.token });
    expect(asB.body.data.map((c: any) => c.uid)).toEqual([embB.uid, embA.uid]);
    expect(
      (await t.rest('GET', `${path}?limit=1&page=2`, { token: b.token })).body.data.map((c: any) => c.uid),
    ).toEqual([embA.uid]);
    expect((await t.rest('GET', `/users/${a.username}/circuits/uses-target/embeds`)).body.data).toEqual([]);
  });

  test('at most 200 in all', async () => {
    const owner = await makeUser();
    const { circuit: target } = await makeCircuit(owner);
    const embedders = await Circuit.bulkCreate(
      Array.from({ length: 205 }, (_, i) => ({ owner_uid: owner.user.uid, name: `e${i}`, uid: crypto.randomUUID() })),
    );
    const versions = await CircuitVersion.bulkCreate(
      embedders.map((c) => ({
        circuit_uid: c.uid,
        number: 1,
        definition: {
          query_schema: { type: 'object' },
          steps: [{ id: 'x', kind: 'circuit', circuit_uid: target.uid }],
        },
      })),
    );
    await CircuitEmbed.bulkCreate(
      versions.map((v) => ({ version_uid: v.uid, circuit_uid: v.circuit_uid, embedded_circuit_uid: target.uid })),
    );

    const path = `/users/${owner.username}/circuits/${target.name}/embeds`;
    const first = await t.rest('GET', `${path}?limit=100`);
    expect(first.body.meta).toEqual({ total_count: 200, limit: 100, page: 1 });
    expect(first.body.data).toHaveLength(100);
    expect((await t.rest('GET', `${path}?limit=100&page=2`)).body.data).toHaveLength(100);
    expect((await t.rest('GET', `${path}?limit=100&page=3`)).body.data).toEqual([]);
    expect((await t.rest('GET', `${path}?limit=30&page=7`)).body.data).toHaveLength(20);
  });

  test('private target needs the owner; unknown 404; bad paging 400', async () => {
    const owner = await makeUser();
    const other = await makeUser();
    const { circuit: priv } = await makeCircuit(owner, { isPrivate: true }, null);
    const path = `/users/${owner.username}/circuits/${priv.name}/embeds`;
    expectError(await t.rest('GET', path), 401, 'Unauthorized');
    expectError(await t.rest('GET', path, { token: other.token }), 403, 'NotAllowed');
    expect((await t.rest('GET', path, { token: owner.token })).body.data).toEqual([]);
    expectError(await t.rest('GET', `/users/${owner.username}/circuits/none/embeds`), 404, 'NotFound');
    expectError(await t.rest('GET', `${path}?limit=two`, { token: owner.token }), 400, 'BadClientData');
  });
});

describe('GET /users/:username/circuits/:circuit_name/explain', () => {
  test('explains the primary version in plain words', async () => {
    const owner = await makeUser();
    const { circuit, version } = await makeCircuit(owner, { name: 'greeter' });
    const res = await t.rest('GET', `/users/${owner.username}/circuits/greeter/explain`);
    expect(res.status).toBe(200);
    const payload = res.body.payload;
    expect(payload.circuit).toMatchObject({ uid: circuit.uid, name: 'greeter', username: owner.username });
    expect(payload.version_uid).toBe(version!.uid);
    expect(payload.inputs).toEqual([{ name: 'name', type: 'string', required: true, description: '' }]);
    expect(payload.steps).toEqual([
      {
        id: 'greet',
        kind: 'template',
        description: 'Fills in the text template "Hello {{input.name}}", using input name.',
      },
      {
        id: 'shout',
        kind: 'transform',
        description:
          'Computes the JSONata expression "$uppercase(steps.greet.output)", using the output of step greet.',
      },
    ]);
    expect(payload.text.split('\n')).toEqual([
      'Takes input: name (string, required).',
      '1. greet (template): Fills in the text template "Hello {{input.name}}", using input name.',
      '2. shout (transform): Computes the JSONata expression "$uppercase(steps.greet.output)", using the output of step greet.',
      'Returns the JSONata expression "steps.shout.output" over the input and step outputs.',
    ]);
  });

  test('names embedded circuits the caller may list and hides the others', async () => {
    const owner = await makeUser();
    const { circuit: inner } = await makeCircuit(owner, { name: 'inner-private', isPrivate: true });
    await makeEmbeddingCircuit(owner, inner, { name: 'outer' });
    const mine = await t.rest('GET', `/users/${owner.username}/circuits/outer/explain`, { token: owner.token });
    expect(mine.body.payload.steps[0].description).toContain(
      `Runs the circuit ${owner.username}/inner-private (its primary version)`,
    );
    const theirs = await t.rest('GET', `/users/${owner.username}/circuits/outer/explain`);
    expect(theirs.body.payload.steps[0].description).toContain('a circuit you cannot see');
    expect(theirs.body.payload.text).not.toContain('inner-private');
  });

  test('needs read permission; 404 without a version', async () => {
    const owner = await makeUser();
    const other = await makeUser();
    const { circuit: prot } = await makeCircuit(owner, { isProtected: true });
    const { circuit: empty } = await makeCircuit(owner, {}, null);
    expectError(await t.rest('GET', `/users/${owner.username}/circuits/${prot.name}/explain`), 401, 'Unauthorized');
    expectError(
      await t.rest('GET', `/users/${owner.username}/circuits/${prot.name}/explain`, { token: other.token }),
      403,
      'NotAllowed',
    );
    expect(
      (await t.rest('GET', `/users/${owner.username}/circuits/${prot.name}/explain`, { token: owner.token })).status,
    ).toBe(200);
    expectError(await t.rest('GET', `/users/${owner.username}/circuits/${empty.name}/explain`), 404, 'NotFound');
    expectError(await t.rest('GET', `/users/${owner.username}/circuits/nothing/explain`), 404, 'NotFound');
  });
});
