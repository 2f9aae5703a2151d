import { useTestApp } from './support/app';
import { HELLO_DEFINITION, makeCircuit, makeUser, TestUser } from './support/factories';
import { waitForRun } from './support/run-factories';
import { CircuitRun } from '../src/models/CircuitRun';

jest.setTimeout(60_000);

const t = useTestApp();
let owner: TestUser;
let circuitUid: string;

beforeAll(async () => {
  owner = await makeUser({ credits: 100 });
  circuitUid = (await makeCircuit(owner, {}, HELLO_DEFINITION)).circuit.uid;
});

const create = (body: unknown, token = owner.token, circuit = circuitUid) =>
  t.rest('POST', `/circuits/${circuit}/schedules`, { token, body });

async function until<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 25_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('a schedule is created, read, listed, paused, resumed, changed and deleted over REST', async () => {
  const created = await create({ cron: '0 0 9 * * 1-5', timezone: 'Europe/Paris', input: { name: 'Ada' } });
  expect(created.status).toBe(200);
  const schedule = created.body.payload;
  expect(schedule).toEqual({
    uid: expect.any(String),
    circuit_uid: circuitUid,
    cron: '0 0 9 * * 1-5',
    timezone: 'Europe/Paris',
    input: { name: 'Ada' },
    version_uid: null,
    is_public: false,
    is_paused: false,
    next_run_at: expect.any(String),
    last_run_uid: null,
    last_error: null,
    created_at: expect.any(String),
    updated_at: expect.any(String),
  });
  // 9:00 in Paris is 7:00 or 8:00 UTC, on a weekday.
  const next = new Date(schedule.next_run_at);
  expect([7, 8]).toContain(next.getUTCHours());
  expect([1, 2, 3, 4, 5]).toContain(new Date(next.getTime() + 2 * 3600_000).getUTCDay());

  expect((await t.rest('GET', `/schedules/${schedule.uid}`, { token: owner.token })).body.payload).toEqual(schedule);
  const list = await t.rest('GET', `/circuits/${circuitUid}/schedules`, { token: owner.token });
  expect(list.body.meta).toEqual({ total_count: 1, limit: 10, page: 1 });
  expect(list.body.data).toEqual([schedule]);

  const paused = await t.rest('PUT', `/schedules/${schedule.uid}`, { token: owner.token, body: { is_paused: true } });
  expect(paused.body.payload).toMatchObject({ is_paused: true, next_run_at: null, cron: '0 0 9 * * 1-5' });
  const changed = await t.rest('PUT', `/schedules/${schedule.uid}`, {
    token: owner.token,
    body: { is_paused: false, cron: '30 6 * * *', timezone: 'UTC', input: { name: 'Bo' } },
  });
  expect(changed.body.payload).toMatchObject({
    is_paused: false,
    cron: '30 6 * * *',
    timezone: 'UTC',
    input: { name: 'Bo' },
  });
  expect(changed.body.payload.next_run_at).toMatch(/T06:30:00\.000Z$/);

  expect((await t.rest('DELETE', `/schedules/${schedule.uid}`, { token: owner.token })).body).toEqual({
    status: 'success',
    payload: true,
  });
  expect((await t.rest('GET', `/schedules/${schedule.uid}`, { token: owner.token })).status).toBe(404);
  expect((await t.rest('DELETE', `/schedules/${schedule.uid}`, { token: owner.token })).status).toBe(404);
  const [[{ n }]] = (await t.app.services.sequelize.query(
    `SELECT count(*) AS n FROM agenda_jobs WHERE name = 'fireSchedule' AND data->>'scheduleUid' = $1`,
    { bind: [schedule.uid] },
  )) as [{ n: string }[], unknown];
  expect(Number(n)).toBe(0);
});

test('PUT with version_uid pins a version and with version_uid null goes back to the primary version; absent keeps it', async () => {
  const { circuit, version } = await makeCircuit(owner, {}, HELLO_DEFINITION);
  const pinned = await create(
    { cron: '0 * * * *', input: { name: 'x' }, version_uid: version!.uid },
    owner.token,
    circuit.uid,
  );
  expect(pinned.body.payload.version_uid).toBe(version!.uid);
  const uid = pinned.body.payload.uid;
  const kept = await t.rest('PUT', `/schedules/${uid}`, { token: owner.token, body: { is_paused: true } });
  expect(kept.body.payload.version_uid).toBe(version!.uid);
  const primary = await t.rest('PUT', `/schedules/${uid}`, { token: owner.token, body: { version_uid: null } });
  expect([primary.status, primary.body.payload?.version_uid]).toEqual([200, null]);
  expect((await t.rest('GET', `/schedules/${uid}`, { token: owner.token })).body.payload.version_uid).toBeNull();
  const again = await t.rest('PUT', `/schedules/${uid}`, { token: owner.token, body: { version_uid: version!.uid } });
  expect(again.body.payload.version_uid).toBe(version!.uid);
  await t.rest('DELETE', `/schedules/${uid}`, { token: owner.token });

  const openApi = (await t.http('GET', '/api/v1/openapi.json')).body;
  const versionUid =
    openApi.paths['/schedules/{uid}'].put.requestBody.content['application/json'].schema.properties.version_uid;
  expect(versionUid.anyOf).toContainEqual({ type: 'null' });
  expect(versionUid.description).toMatch(/null: back to the circuit's primary version .*absent: unchanged/);
});

test('bad schedules are 400 naming the field; others may not see or touch one', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ cron: '* * * * * * *', input: { name: 'x' } }, 'cron'],
    [{ cron: '* * * *', input: { name: 'x' } }, 'cron'],
    [{ cron: '*/5 * * * * *', input: { name: 'x' } }, 'cron'],
    [{ cron: '0,5 * * * * *', input: { name: 'x' } }, 'cron'],
    [{ cron: '61 * * * *', input: { name: 'x' } }, 'cron'],
    [{ cron: '@hourly', input: { name: 'x' } }, 'cron'],
    [{ cron: 'x'.repeat(500), input: { name: 'x' } }, 'cron'],
    [{ cron: '0 * * * *', timezone: 'Mars/Olympus', input: { name: 'x' } }, 'timezone'],
    [{ cron: '0 * * * *', input: { nom: 'x' } }, 'name'],
  ];
  for (const [body, field] of cases) {
    const res = await create(body);
    expect([res.status, res.body.error?.code]).toEqual([400, 'BadClientData']);
    expect(res.body.error.message).toContain(field);
  }
  expect(
    (await create({ cron: '0 * * * *', input: { name: 'x' }, version_uid: '00000000-0000-4000-8000-000000000000' }))
      .status,
  ).toBe(404);
  expect(
    (await create({ cron: '0 * * * *', input: { name: 'x' } }, owner.token, '00000000-0000-4000-8000-000000000000'))
      .status,
  ).toBe(404);
  expect(
    (await t.rest('POST', `/circuits/${circuitUid}/schedules`, { body: { cron: '0 * * * *', input: { name: 'x' } } }))
      .status,
  ).toBe(401);

  const other = await makeUser();
  expect((await create({ cron: '0 * * * *', input: { name: 'x' } }, other.token)).status).toBe(403);
  expect((await t.rest('GET', `/circuits/${circuitUid}/schedules`, { token: other.token })).status).toBe(403);
  const { uid } = (await create({ cron: '0 * * * *', input: { name: 'x' } })).body.payload;
  for (const [method, body] of [
    ['GET', undefined],
    ['PUT', { is_paused: true }],
    ['DELETE', undefined],
  ] as const) {
    expect((await t.rest(method, `/schedules/${uid}`, { token: other.token, body })).status).toBe(403);
    expect((await t.rest(method, `/schedules/${uid}`, { body })).status).toBe(401);
    expect((await t.rest(method, '/schedules/not-a-uid', { token: owner.token, body })).status).toBe(404);
  }
  expect(
    (await t.rest('PUT', `/schedules/${uid}`, { token: owner.token, body: { cron: '*/2 * * * * *' } })).status,
  ).toBe(400);
  expect((await t.rest('GET', `/schedules/${uid}`, { token: owner.token })).body.payload.cron).toBe('0 * * * *');
  await t.rest('DELETE', `/schedules/${uid}`, { token: owner.token });
});

// The two fire tests wait for a cron instant of their own schedules (up to 10 s): side by side, one wait.
test.concurrent(
  'a 6-field cron fires every 10 s: each fire is an ordinary run of the owner, recorded as last_run_uid',
  async () => {
    const { uid } = (await create({ cron: '*/10 * * * * *', input: { name: 'Cron' } })).body.payload;
    const fired = await until(
      'a fire',
      async () => (await t.rest('GET', `/schedules/${uid}`, { token: owner.token })).body.payload,
      (s) => s.last_run_uid !== null,
    );
    expect(fired.last_error).toBeNull();
    const run = await waitForRun(t, fired.last_run_uid, owner.token);
    expect(run).toMatchObject({
      state: 'COMPLETED',
      user_uid: owner.user.uid,
      circuit_uid: circuitUid,
      is_public: false,
      result_blob: { output: 'HELLO CRON' },
    });
    expect(new Date(run.created_at).getUTCSeconds() % 10).toBe(0);
    await t.rest('DELETE', `/schedules/${uid}`, { token: owner.token });
  },
);

test.concurrent(
  'a fire without credits starts no run and records last_error; GraphQL shows the same schedule',
  async () => {
    const poor = await makeUser({ credits: 0 });
    const { circuit } = await makeCircuit(poor, {}, HELLO_DEFINITION);
    const created = await t.gql(
      `mutation($c: ID!) { createCircuitSchedule(circuitUid: $c, cron: "*/10 * * * * *", input: {name: "Poor"}) { uid isPaused lastError } }`,
      { c: circuit.uid },
      poor.token,
    );
    const uid = created.data.createCircuitSchedule.uid;
    const failed = await until(
      'a failed fire',
      async () =>
        (
          await t.gql(
            `query($u: ID!) { circuitSchedule(uid: $u) { lastError lastRunUid nextRunAt } }`,
            { u: uid },
            poor.token,
          )
        ).data.circuitSchedule,
      (s) => s.lastError !== null,
    );
    expect(failed.lastError).toMatch(/^InsufficientCredits/);
    expect(failed.lastRunUid).toBeNull();
    expect(await CircuitRun.count({ where: { circuit_uid: circuit.uid } })).toBe(0);
    const deleted = await t.gql(`mutation($u: ID!) { deleteCircuitSchedule(uid: $u) }`, { u: uid }, poor.token);
    expect(deleted.data.deleteCircuitSchedule).toBe(true);
  },
);
