import { Client } from 'pg';
import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import { ApiToken } from '../src/models';
import { revokeApiToken } from '../src/commands/revoke-api-token';
import { TokenCache } from '../src/auth/token-cache';
import { AUTH_COLUMNS } from '../src/db/migrations/0017-auth-changed-by-column';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `check` holds or `ms` pass; returns how long it took. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await sleep(10);
  }
  return Date.now() - started;
}

describe('the token cache never outlives a revocation or a user change', () => {
  let api1: TestApp;
  let api2: TestApp;
  let sql: Client;

  beforeAll(async () => {
    api1 = await startTestApp();
    api2 = await startTestApp({}, { databaseUrl: api1.databaseUrl });
    sql = new Client({ connectionString: api1.databaseUrl });
    await sql.connect();
  });
  afterAll(async () => {
    await sql.end();
    await api2.close();
    await api1.close();
  });

  const viewer = async (app: TestApp, token: string) =>
    await app.gql<{ viewer: { username: string; isAdmin: boolean } | null }>(
      '{ viewer { username isAdmin } }',
      {},
      token,
    );

  it('a token revoked by another process (plain SQL, no hooks) is refused by both API processes', async () => {
    const alice = await makeUser();
    for (const app of [api1, api2]) {
      for (let i = 0; i < 3; i++)
        expect((await app.rest('GET', '/users/stars', { token: alice.token })).status).toBe(200);
    }
    await sql.query('UPDATE api_tokens SET revoked_at = now() WHERE user_uid = $1', [alice.user.uid]);
    for (const app of [api1, api2]) {
      await within(1_000, async () => (await app.rest('GET', '/users/stars', { token: alice.token })).status === 401);
    }
  });

  it('a token revoked through the commands in this process is refused by its very next request', async () => {
    const bob = await makeUser();
    expect((await api1.rest('GET', '/users/stars', { token: bob.token })).status).toBe(200);
    const token = await ApiToken.findOne({ where: { user_uid: bob.user.uid } });
    expect(await revokeApiToken(bob.user, token!.uid)).toBe(true);
    expect((await api1.rest('GET', '/users/stars', { token: bob.token })).status).toBe(401);
  });

  it('a user row changed elsewhere is seen through a cached token', async () => {
    const carol = await makeUser();
    expect((await viewer(api2, carol.token)).data?.viewer?.isAdmin).toBe(false);
    await sql.query('UPDATE users SET is_admin = true WHERE uid = $1', [carol.user.uid]);
    await within(1_000, async () => (await viewer(api2, carol.token)).data?.viewer?.isAdmin === true);
  });

  it('balance changes (holds, charges, grants) notify nobody, and a cached viewer still shows the balance as committed', async () => {
    const erin = await makeUser({ credits: 5 });
    const heard: string[] = [];
    const listener = new Client({ connectionString: api1.databaseUrl });
    await listener.connect();
    listener.on('notification', (message) => {
      if (message.payload) heard.push(message.payload);
    });
    await listener.query('LISTEN auth_changed');
    try {
      const credits = async () =>
        (
          await api1.gql<{ viewer: { credits: number; creditsHeld: number } }>(
            '{ viewer { credits creditsHeld } }',
            {},
            erin.token,
          )
        ).data?.viewer;
      expect(await credits()).toEqual({ credits: 5, creditsHeld: 0 });
      await sql.query('UPDATE users SET credits_held = credits_held + 2 WHERE uid = $1', [erin.user.uid]);
      expect(await credits()).toEqual({ credits: 5, creditsHeld: 2 });
      await sql.query(
        'UPDATE users SET credits = credits - 1, credits_held = credits_held - 2, updated_at = now() WHERE uid = $1',
        [erin.user.uid],
      );
      expect(await credits()).toEqual({ credits: 4, creditsHeld: 0 });
      await sql.query("UPDATE users SET name = 'Erin' WHERE uid = $1", [erin.user.uid]);
      await within(1_000, async () => heard.includes(erin.user.uid));
      expect(heard).toEqual([erin.user.uid]);
    } finally {
      await listener.end();
    }
  });

  it('every column of users but the balance fires the auth_changed trigger (a new column must join AUTH_COLUMNS, migration 0017)', async () => {
    const { rows } = await sql.query<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'users' ORDER BY column_name",
    );
    const fired = await sql.query<{ column_name: string }>(`
      SELECT a.attname AS column_name FROM pg_trigger t JOIN pg_attribute a ON a.attrelid = t.tgrelid AND a.attnum = ANY (t.tgattr)
       WHERE t.tgname = 'users_auth_changed_update' ORDER BY a.attname`);
    const balance = ['credits', 'credits_held', 'updated_at'];
    expect(fired.rows.map((r) => r.column_name)).toEqual(
      rows.map((r) => r.column_name).filter((name) => !balance.includes(name)),
    );
    expect([...AUTH_COLUMNS].sort()).toEqual(fired.rows.map((r) => r.column_name));
  });

  it('a deleted user is gone at once for every cached token', async () => {
    const dave = await makeUser();
    expect((await viewer(api1, dave.token)).data?.viewer?.username).toBe(dave.username);
    await sql.query('DELETE FROM users WHERE uid = $1', [dave.user.uid]);
    await within(1_000, async () => (await api1.rest('GET', '/users/stars', { token: dave.token })).status === 401);
  });
});

describe('TokenCache', () => {
  const entry = {
    userRow: { uid: 'u1' },
    token: { uid: 't1', label: null, last_used_at: null, created_at: new Date() },
    grant: { tokenUid: 't1', scopes: null, expiresAt: null, circuitUids: null, maxCreditsPerDay: null },
  };

  it('stores nothing while its listener is down', () => {
    const cache = new TokenCache();
    cache.set('h', 'u1', entry, cache.begin());
    expect(cache.get('h')).toBeUndefined();
  });

  it('does not store a row read before an invalidation of its user', () => {
    const cache = new TokenCache();
    cache.setLive(true);
    const begunAt = cache.begin();
    cache.invalidateUser('u1');
    cache.set('h', 'u1', entry, begunAt);
    expect(cache.get('h')).toBeUndefined();
    cache.set('h', 'u1', entry, cache.begin());
    expect(cache.get('h')).toBeDefined();
  });

  it('an invalidation of one user leaves the others cached', () => {
    const cache = new TokenCache();
    cache.setLive(true);
    cache.set('h1', 'u1', entry, cache.begin());
    cache.set('h2', 'u2', { ...entry, userRow: { uid: 'u2' } }, cache.begin());
    cache.invalidateUser('u1');
    expect(cache.get('h1')).toBeUndefined();
    expect(cache.get('h2')).toBeDefined();
  });
});
