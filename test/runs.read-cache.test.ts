import { Client } from 'pg';
import { RunReadCache } from '../src/runs/read-cache';
import { deprecateCircuit } from '../src/commands/deprecate-circuit';
import { Circuit } from '../src/models';
import { CircuitRun } from '../src/models/CircuitRun';
import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, readSse, startHoldingTarget, submitRun, waitForRun } from './support/run-factories';

/**
 * The per-process shared copies of large ended runs (src/runs/read-cache.ts, migration 0015; the
 * memory bound: many readers of a large run hold one copy) never answer with anything stale or private:
 *  - only ended runs whose rows' JSON is over 128 KiB are kept, and a second read of one comes from the
 *    cache; a small ended run is read from the database each time;
 *  - a circuit deprecated by SQL from another connection (no model hooks, only the NOTIFY) shows its
 *    notice and `Deprecation` header within a second; deprecated through the command in this process,
 *    at once;
 *  - a run deleted with its user by SQL is 404 within a second;
 *  - the run policy still decides every request: a cached private run answers other users and
 *    anonymous callers exactly as it did before it was cached;
 *  - while the LISTEN connection is down nothing is served from (or put in) the cache;
 *  - the cached rows are frozen.
 *
 * Two app instances share one database, as two API processes would; each has its own cache (its
 * RunService). api2 is "the process that had the run cached" (runs are read and started through it),
 * and the plain `pg` client `sql` is "SQL outside this process".
 */

let api1: TestApp;
let api2: TestApp;
let sql: Client;
let target: Awaited<ReturnType<typeof startHoldingTarget>>;
let owner: TestUser;
let runner: TestUser;
let stranger: TestUser;

beforeAll(async () => {
  api1 = await startTestApp();
  api2 = await startTestApp({}, { databaseUrl: api1.databaseUrl });
  sql = new Client({ connectionString: api1.databaseUrl });
  await sql.connect();
  target = await startHoldingTarget();
  [owner, runner, stranger] = await Promise.all([makeUser(), makeUser(), makeUser()]);
});
afterAll(async () => {
  await target.close();
  await sql.end();
  await api2.close();
  await api1.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `check` holds; fails after `ms`. */
async function within(ms: number, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await sleep(10);
  }
}

/** api2's cache (see the header). */
const cache = () => api2.app.services.runs.readCache;

/** GET /circuit-runs/{uid} on `app`: status, body, and the Deprecation header. */
async function getRun(app: TestApp, uid: string, token?: string) {
  const res = await app.rest('GET', `/circuit-runs/${uid}`, { token });
  return { status: res.status, body: res.body, deprecation: res.headers.get('deprecation') };
}

/** GraphQL `circuitRun` on `app`: the run (or null), the error code, the notices. */
async function queryRun(app: TestApp, uid: string, token?: string) {
  const res = await app.gql<{ circuitRun: { uid: string; state: string } | null }>(
    'query($uid: ID!) { circuitRun(uid: $uid) { uid state } }',
    { uid },
    token,
  );
  return { run: res.data?.circuitRun ?? null, code: res.code, notices: res.extensions?.notices };
}

/**
 * A name that makes a run's rows large (above the cache's 128 KiB, both its input and its result):
 * only such ended runs are kept.
 */
const LARGE_NAME = `Ada${'x'.repeat(140_000)}`;
/** HELLO's result for LARGE_NAME. */
const LARGE_OUTPUT = `HELLO ${LARGE_NAME.toUpperCase()}`;

/** A run of a fresh HELLO circuit of `owner` (a large one unless `input` says otherwise), started by `by` and waited for until it has ended. */
async function endedRun(by: TestUser, body: { input?: Record<string, unknown>; is_public?: boolean } = {}) {
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const submitted = await submitRun(api1, by.token, hello.adaptorUid, { input: { name: LARGE_NAME }, ...body });
  expect(submitted.status).toBe(200);
  const uid = submitted.body.payload.uid as string;
  await waitForRun(api1, uid, by.token);
  return { uid, circuit: hello.circuit };
}

/** Reads the run on api2 until its rows are in the cache (a NOTIFY of another test may drop them). */
async function cached(uid: string, token?: string): Promise<void> {
  await within(5_000, async () => {
    expect((await getRun(api2, uid, token)).status).toBe(200);
    return cache().get(uid) !== undefined;
  });
}

/**
 * Runs `body` while the cache ignores NOTIFYs (as if they had not arrived yet): only a write committed
 * through the models of this process (NotifiedCache.invalidate() with no payload) drops it.
 */
async function withNotifiesHeldBack(body: () => Promise<void>): Promise<void> {
  const held = cache();
  const spy = jest.spyOn(held, 'invalidate').mockImplementation((payload?: string) => {
    if (payload === undefined) RunReadCache.prototype.invalidate.call(held);
  });
  try {
    await body();
  } finally {
    spy.mockRestore();
  }
}

const deprecatedNotice = (name: string) => [
  { code: 'deprecated', message: `Circuit ${name} is deprecated and may be removed in the future` },
];

test("the models of both instances use api2's pool, so api2's cache is the one being exercised", () => {
  expect(CircuitRun.sequelize).toBe(api2.app.services.sequelize);
});

describe('what is cached', () => {
  test('an ended run read twice is served from the cache, over REST and GraphQL', async () => {
    const { uid } = await endedRun(runner);
    cache().invalidate();
    expect(cache().get(uid)).toBeUndefined();
    const first = await getRun(api2, uid, runner.token);
    expect(first.status).toBe(200);
    expect(first.body.payload).toMatchObject({ uid, state: 'COMPLETED', result_blob: { output: LARGE_OUTPUT } });
    const rows = cache().get(uid);
    expect(rows).toBeDefined();
    expect(rows!.run).toMatchObject({ uid, state: 'COMPLETED' });

    // The second read is answered from those very rows, identically, by either instance and by GraphQL.
    for (const app of [api2, api1]) expect(await getRun(app, uid, runner.token)).toEqual(first);
    expect(await queryRun(api2, uid, runner.token)).toEqual({
      run: { uid, state: 'COMPLETED' },
      code: undefined,
      notices: undefined,
    });
    expect(cache().get(uid)).toBe(rows);
  });

  test('a small ended run (rows of 128 KiB or less) is not kept: each read goes to the database', async () => {
    const { uid } = await endedRun(runner, { input: { name: 'Ada' } });
    for (let i = 0; i < 3; i++) {
      const read = await getRun(api2, uid, runner.token);
      expect(read.status).toBe(200);
      expect(read.body.payload).toMatchObject({ uid, state: 'COMPLETED', result_blob: { output: 'HELLO ADA' } });
      expect(await queryRun(api2, uid, runner.token)).toEqual({
        run: { uid, state: 'COMPLETED' },
        code: undefined,
        notices: undefined,
      });
      expect(cache().get(uid)).toBeUndefined();
    }
  });

  test('a run still PROVISIONED or RUNNING is never cached; once it has ended it is', async () => {
    const held = await makeRunnableCircuit(owner, target.holdDefinition());
    // A large input, so that the run is kept once it has ended.
    const submitted = await submitRun(api1, runner.token, held.adaptorUid, { input: { pad: LARGE_NAME } });
    const uid = submitted.body.payload.uid as string;
    expect(['PROVISIONED', 'RUNNING']).toContain((await getRun(api2, uid, runner.token)).body.payload.state);
    expect(cache().get(uid)).toBeUndefined();

    await target.untilHeld(1);
    for (let i = 0; i < 3; i++) {
      expect((await getRun(api2, uid, runner.token)).body.payload.state).toBe('RUNNING');
      expect((await queryRun(api2, uid, runner.token)).run?.state).toBe('RUNNING');
      expect(cache().get(uid)).toBeUndefined();
    }

    target.release();
    await waitForRun(api2, uid, runner.token);
    await cached(uid, runner.token);
    expect(cache().get(uid)!.run.state).toBe('COMPLETED');
  });
});

describe('nothing stale', () => {
  test('a circuit deprecated by SQL from another connection: the notice and Deprecation header within 1 s', async () => {
    const { uid, circuit } = await endedRun(runner);
    await cached(uid, runner.token);
    const before = await getRun(api2, uid, runner.token);
    expect(before.deprecation).toBeNull();
    expect(before.body.notices).toBeUndefined();

    await sql.query('UPDATE circuits SET is_deprecated = true, deprecated_at = now() WHERE uid = $1', [circuit.uid]);
    await within(1_000, async () => (await getRun(api2, uid, runner.token)).deprecation !== null);

    for (const app of [api2, api1]) {
      const after = await getRun(app, uid, runner.token);
      expect(after.status).toBe(200);
      expect(after.deprecation).toMatch(/^@\d+$/);
      expect(after.body.notices).toEqual(deprecatedNotice(circuit.name));
      expect(after.body.payload).toEqual(before.body.payload);
    }
    expect((await queryRun(api2, uid, runner.token)).notices).toEqual(deprecatedNotice(circuit.name));
  });

  test('a circuit deprecated through the command in this process: the very next read carries the notice', async () => {
    const { uid, circuit } = await endedRun(runner);
    await cached(uid, runner.token);
    expect((await getRun(api2, uid, runner.token)).deprecation).toBeNull();

    // The NOTIFY would come too, a moment later: held back, so that only the commit hook can explain the notice.
    await withNotifiesHeldBack(async () => {
      await deprecateCircuit(Circuit.sequelize!, circuit);
      const rest = await getRun(api2, uid, runner.token);
      expect(rest.deprecation).toMatch(/^@\d+$/);
      expect(rest.body.notices).toEqual(deprecatedNotice(circuit.name));
      expect((await queryRun(api2, uid, runner.token)).notices).toEqual(deprecatedNotice(circuit.name));
    });
  });

  test("the run's user deleted by SQL (the run goes with it): 404 NotFound within 1 s", async () => {
    const doomed = await makeUser();
    const { uid } = await endedRun(doomed);
    await cached(uid, doomed.token);
    // Someone else is refused while the run exists; once it is gone, it is not found for anyone.
    expect((await getRun(api2, uid, stranger.token)).status).toBe(403);
    expect((await getRun(api2, uid)).status).toBe(401);

    await sql.query('DELETE FROM users WHERE uid = $1', [doomed.user.uid]);
    await within(1_000, async () => (await getRun(api2, uid, stranger.token)).status === 404);

    for (const app of [api2, api1]) {
      for (const token of [stranger.token, undefined]) {
        const gone = await getRun(app, uid, token);
        expect({ status: gone.status, code: gone.body.error?.code }).toEqual({ status: 404, code: 'NotFound' });
      }
    }
    expect((await queryRun(api2, uid, stranger.token)).code).toBe('NotFound');
    expect(cache().get(uid)).toBeUndefined();
  });
});

describe('nothing private', () => {
  test("a private run cached by its owner's reads answers others exactly as before it was cached", async () => {
    const { uid } = await endedRun(runner);
    const othersRead = {
      stranger: () => getRun(api2, uid, stranger.token),
      circuitOwner: () => getRun(api2, uid, owner.token),
      anonymous: () => getRun(api2, uid),
      graphqlStranger: () => queryRun(api2, uid, stranger.token),
      graphqlAnonymous: () => queryRun(api2, uid),
    };
    const readAll = async () => {
      const answers: Record<string, unknown> = {};
      for (const [name, read] of Object.entries(othersRead)) answers[name] = await read();
      return answers;
    };

    // Before: each of these requests reads the database (the cache is emptied before each one).
    const before: Record<string, unknown> = {};
    for (const [name, read] of Object.entries(othersRead)) {
      cache().invalidate();
      before[name] = await read();
    }
    expect(before).toMatchObject({
      stranger: { status: 403, body: { error: { code: 'NotAllowed' } } },
      circuitOwner: { status: 403, body: { error: { code: 'NotAllowed' } } },
      anonymous: { status: 401, body: { error: { code: 'Unauthorized' } } },
      graphqlStranger: { run: null, code: 'NotAllowed' },
      graphqlAnonymous: { run: null, code: 'Unauthorized' },
    });

    // The owner's reads cache the run; everyone else is answered as before and sees nothing of it.
    await cached(uid, runner.token);
    const after = await readAll();
    expect(cache().get(uid)).toBeDefined();
    expect(after).toEqual(before);
    expect(JSON.stringify(after)).not.toContain('HELLO ADA');
    expect(JSON.stringify(after)).not.toContain('Adaxxx');
  });

  test('a public run is readable by all, cached or not', async () => {
    const { uid } = await endedRun(owner, { is_public: true });
    cache().invalidate();
    const fresh = await getRun(api2, uid);
    expect(fresh.status).toBe(200);
    expect(fresh.body.payload).toMatchObject({ uid, is_public: true, result_blob: { output: LARGE_OUTPUT } });
    expect(cache().get(uid)).toBeDefined();
    for (const token of [undefined, stranger.token, runner.token, owner.token]) {
      // The owner also sees the owner-only fields (priority).
      const expected = token === owner.token ? { ...fresh.body.payload, priority: 5 } : fresh.body.payload;
      expect((await getRun(api2, uid, token)).body.payload).toEqual(expected);
      expect((await queryRun(api2, uid, token)).run).toEqual({ uid, state: 'COMPLETED' });
    }
  });
  test("a large ended run, whose answer's bytes are shared by the requests answered the same, answers each viewer what the policy lets it see", async () => {
    // A public ended run with a large answer (above the cache's entry size and the bridge's 64 KiB slice: its
    // answer is serialised once per view, the owner's and any reader's, and kept beside its rows) and an
    // owner-only field (`metadata`, and `priority`), both written by SQL.
    const { uid } = await endedRun(owner, { is_public: true });
    await sql.query('UPDATE circuit_runs SET result_blob = $2, metadata = $3 WHERE uid = $1', [
      uid,
      JSON.stringify({ output: 'x'.repeat(200_000) }),
      JSON.stringify({ secret: 'for the owner only' }),
    ]);

    const readAll = async () => ({
      owner: await getRun(api2, uid, owner.token),
      stranger: await getRun(api2, uid, stranger.token),
      anonymous: await getRun(api2, uid),
    });
    let first: Awaited<ReturnType<typeof readAll>> | undefined;
    await within(5_000, async () => {
      first = await readAll();
      return (
        first.owner.body.payload?.metadata !== undefined &&
        first.anonymous.body.payload?.result_blob?.output !== LARGE_OUTPUT
      );
    });
    expect(first!.owner.status).toBe(200);
    expect(first!.owner.body.payload).toMatchObject({
      uid,
      state: 'COMPLETED',
      metadata: { secret: 'for the owner only' },
    });
    expect(JSON.stringify(first!.owner.body).length).toBeGreaterThan(128 * 1024);
    for (const reader of [first!.stranger, first!.anonymous]) {
      expect(reader.status).toBe(200);
      expect(reader.body.payload).toEqual(
        Object.fromEntries(
          Object.entries(first!.owner.body.payload).filter(([field]) => field !== 'metadata' && field !== 'priority'),
        ),
      );
    }
    // Again, in either order, from the cached rows and the bytes beside them: the same answers.
    await cached(uid);
    const again = await readAll();
    expect(again).toEqual(first);
    expect((await getRun(api2, uid)).body).toEqual(first!.anonymous.body);
    expect((await getRun(api2, uid, owner.token)).body).toEqual(first!.owner.body);
    // Those were the kept bytes: one answer per view beside the cached rows.
    const rows = cache().get(uid)!;
    for (const view of ['reader', `owner:${owner.user.uid}`])
      expect(cache().beside(rows, `answers:${view}`, () => new Map()).size).toBe(1);

    // Made private by SQL elsewhere: the policy refuses the others within the NOTIFY, the owner still reads it.
    await sql.query('UPDATE circuit_runs SET is_public = false WHERE uid = $1', [uid]);
    await within(1_000, async () => (await getRun(api2, uid)).status === 401);
    expect(await getRun(api2, uid, stranger.token)).toMatchObject({
      status: 403,
      body: { error: { code: 'NotAllowed' } },
    });
    const owned = await getRun(api2, uid, owner.token);
    expect(owned.status).toBe(200);
    expect(owned.body.payload).toEqual({ ...first!.owner.body.payload, is_public: false });
  });
});

describe('starting a run', () => {
  // The circuit behind an adaptor is kept with the ended runs (the same notifications drop it); the
  // run policy decides from it on every request.
  const start = (adaptorUid: string, by: TestUser) => submitRun(api2, by.token, adaptorUid, { input: { name: 'Ada' } });

  test("a circuit made private by SQL elsewhere refuses other users' runs within the NOTIFY, as uncached", async () => {
    const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    expect((await start(hello.adaptorUid, stranger)).status).toBe(200);
    expect(cache().circuitOfAdaptor(hello.adaptorUid)).toMatchObject({ uid: hello.circuit.uid, is_private: false });
    expect(cache().circuitOfAdaptor(hello.adaptorUid)).not.toHaveProperty('search_vector');
    await sql.query('UPDATE circuits SET is_private = true WHERE uid = $1', [hello.circuit.uid]);
    let refused: Awaited<ReturnType<typeof start>> | undefined;
    await within(1_000, async () => (refused = await start(hello.adaptorUid, stranger)).status !== 200);
    cache().invalidate();
    const uncached = await start(hello.adaptorUid, stranger);
    expect({ status: refused!.status, body: refused!.body }).toEqual({ status: uncached.status, body: uncached.body });
    expect((await start(hello.adaptorUid, owner)).status).toBe(200);
  });

  test('made private through this process, it refuses the very next run (notifications held back)', async () => {
    const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    await withNotifiesHeldBack(async () => {
      expect((await start(hello.adaptorUid, stranger)).status).toBe(200);
      expect(cache().circuitOfAdaptor(hello.adaptorUid)).toBeDefined();
      const updated = await api2.rest('PUT', `/users/${owner.username}/circuits/${hello.circuit.name}`, {
        token: owner.token,
        body: { is_private: true },
      });
      expect(updated.status).toBe(200);
      expect(cache().circuitOfAdaptor(hello.adaptorUid)).toBeUndefined();
      expect((await start(hello.adaptorUid, stranger)).status).not.toBe(200);
    });
  });

  test("a deleted circuit's adaptor is 404 within the NOTIFY", async () => {
    const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    expect((await start(hello.adaptorUid, owner)).status).toBe(200);
    await sql.query('DELETE FROM circuits WHERE uid = $1', [hello.circuit.uid]);
    await within(1_000, async () => (await start(hello.adaptorUid, owner)).status === 404);
  });
});

describe('the LISTEN connection', () => {
  const listeners = async () =>
    (
      await sql.query(
        `SELECT pid FROM pg_stat_activity WHERE application_name = 'circuit-run-read-cache' AND datname = current_database()`,
      )
    ).rows as { pid: number }[];

  test('while it is down nothing is served from the cache; after it reconnects runs are cached again', async () => {
    const { uid, circuit } = await endedRun(runner);
    await cached(uid, runner.token);
    expect(await listeners()).toHaveLength(2); // one per app instance

    await sql.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'circuit-run-read-cache' AND datname = current_database()`,
    );
    // Lost (until the reconnect, 500 ms later): the run is neither served from the cache nor put back in it by a read.
    await within(2_000, async () => {
      expect((await getRun(api2, uid, runner.token)).status).toBe(200);
      return cache().get(uid) === undefined;
    });

    // A change whose NOTIFY nobody hears is still seen at once (the reconnect is ~500 ms away; were it
    // already back, it would have emptied the cache on coming back, so this holds either way).
    await sql.query('UPDATE circuits SET is_deprecated = true, deprecated_at = now() WHERE uid = $1', [circuit.uid]);
    const during = await getRun(api2, uid, runner.token);
    expect(during.status).toBe(200);
    expect(during.body.notices).toEqual(deprecatedNotice(circuit.name));

    // Back: the listeners return and reads are cached again, with the rows as they are now.
    await within(5_000, async () => (await listeners()).length === 2);
    await cached(uid, runner.token);
    expect(cache().get(uid)!.circuit).toMatchObject({ uid: circuit.uid, is_deprecated: true });
  });
});

describe('the cached rows', () => {
  test('are frozen: a request (or test) cannot change what the next request is answered with', async () => {
    const { uid } = await endedRun(runner, { input: { name: LARGE_NAME, nested: { tags: ['a'] } } });
    await cached(uid, runner.token);
    const rows = cache().get(uid)!;
    const input = rows.run.input as { name: string; nested: { tags: string[] } };
    const result = rows.run.result_blob as { output: string };

    expect(() => {
      input.name = 'Eve';
    }).toThrow(TypeError);
    expect(() => {
      input.nested.tags.push('b');
    }).toThrow(TypeError);
    expect(() => {
      result.output = 'tampered';
    }).toThrow(TypeError);
    expect(() => {
      (rows.run as Record<string, unknown>).state = 'RUNNING';
    }).toThrow(TypeError);
    expect(() => {
      (rows.circuit as Record<string, unknown>).is_deprecated = true;
    }).toThrow(TypeError);

    // Every read path presents the shared rows without writing to them (a write would throw: a 500).
    const again = await getRun(api2, uid, runner.token);
    expect(again.status).toBe(200);
    expect(again.body.payload).toMatchObject({ state: 'COMPLETED', result_blob: { output: LARGE_OUTPUT } });
    expect(again.deprecation).toBeNull();
    const events = await readSse(`${api2.url}/api/v1/circuit-runs/${uid}/events`, { token: runner.token });
    expect(events.status).toBe(200);
    expect(JSON.parse(events.events.at(-1)!.data!)).toMatchObject({
      state: 'COMPLETED',
      result_blob: { output: LARGE_OUTPUT },
    });
    expect(cache().get(uid)).toBe(rows);
  });
});

describe('RunReadCache', () => {
  /** Rows over the 128 KiB a run's rows must take to be kept. */
  const rows = () => ({
    run: { uid: 'r1', state: 'COMPLETED', input: { tags: ['a'], name: LARGE_NAME } },
    circuit: null,
  });

  test('keeps only rows whose JSON is over 128 KiB, and freezes only those', () => {
    const runs = new RunReadCache();
    runs.setLive(true);
    const small = { run: { uid: 'r2', state: 'COMPLETED', input: { tags: ['a'] } }, circuit: null };
    expect(runs.set('r2', small, runs.begin())).toBe(false);
    expect(runs.get('r2')).toBeUndefined();
    expect(Object.isFrozen(small.run)).toBe(false);
    const large = rows();
    expect(runs.set('r1', large, runs.begin())).toBe(true);
    expect(runs.get('r1')).toBe(large);
    expect(Object.isFrozen(large.run.input)).toBe(true);
  });

  test('keeps nothing while its listener is down, and starts empty each time it comes back', () => {
    const runs = new RunReadCache();
    runs.set('r1', rows(), runs.begin());
    expect(runs.get('r1')).toBeUndefined();
    runs.setLive(true);
    runs.set('r1', rows(), runs.begin());
    expect(runs.get('r1')).toBeDefined();
    runs.setLive(false);
    expect(runs.get('r1')).toBeUndefined();
    runs.setLive(true);
    expect(runs.get('r1')).toBeUndefined();
  });

  test('does not keep rows read before an invalidation (they may be the old ones)', () => {
    const runs = new RunReadCache();
    runs.setLive(true);
    const begunAt = runs.begin();
    runs.invalidate();
    runs.set('r1', rows(), begunAt);
    expect(runs.get('r1')).toBeUndefined();
    runs.set('r1', rows(), runs.begin());
    expect(runs.get('r1')).toBeDefined();
  });
});
