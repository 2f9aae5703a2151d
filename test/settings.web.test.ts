import { startTestApp, TestApp } from './support/app';
import { makeUser, HELLO_DEFINITION } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import { createApiToken } from '../src/commands/create-api-token';
import { grantCredits } from '../src/credits/grants';
import { sha256, tempDataDir } from './support/blob-factories';
import { createUser } from '../src/commands/create-user';
import { ApiToken } from '../src/models';
import { Blob } from '../src/models/blobs';

let t: TestApp;
let data: ReturnType<typeof tempDataDir>;
const RATE_LIMIT = 4;
const MAX_BYTES = 2048;
const PASSWORD = 'correct horse battery';

beforeAll(async () => {
  data = tempDataDir();
  // The tests speak for a TLS-terminating proxy on loopback (X-Forwarded-Proto), which must be trusted.
  t = await startTestApp({
    dataDir: data.dir,
    signInRateLimitPerMinute: RATE_LIMIT,
    blobMaxBytes: MAX_BYTES,
    trustProxy: ['loopback'],
  });
});
afterAll(async () => {
  await t.close();
  data.remove();
});

interface Page {
  status: number;
  text: string;
  headers: Headers;
  location: string | null;
}

/** A minimal browser: keeps the session cookie, sends forms, never follows redirects. */
class WebClient {
  cookie: string | null = null;
  lastSetCookie: string | null = null;
  constructor(private readonly headers: Record<string, string> = {}) {}

  async request(method: string, path: string, body?: URLSearchParams | FormData): Promise<Page> {
    const headers: Record<string, string> = { ...this.headers };
    if (this.cookie) headers.cookie = this.cookie;
    const res = await fetch(`${t.url}${path}`, { method, headers, body, redirect: 'manual' });
    const setCookie = res.headers.get('set-cookie');
    if (setCookie) {
      this.lastSetCookie = setCookie;
      const pair = setCookie.split(';')[0];
      this.cookie = /=$/.test(pair) || /Expires=Thu, 01 Jan 1970/.test(setCookie) ? null : pair;
    }
    return { status: res.status, text: await res.text(), headers: res.headers, location: res.headers.get('location') };
  }

  get(path: string) {
    return this.request('GET', path);
  }

  /** POSTs a form, adding the CSRF token found on `csrfFrom` unless `csrf` is given. */
  async post(
    path: string,
    fields: Record<string, string>,
    { csrf, csrfFrom = '/settings/sign-in' }: { csrf?: string | null; csrfFrom?: string } = {},
  ) {
    const token = csrf === undefined ? csrfOf((await this.get(csrfFrom)).text) : csrf;
    const form = new URLSearchParams(fields);
    if (token !== null) form.set('_csrf', token);
    return this.request('POST', path, form);
  }

  async signIn(username: string, password = PASSWORD): Promise<Page> {
    return this.post('/settings/sign-in', { username, password });
  }
}

function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error(`no CSRF token in page:\n${html.slice(0, 500)}`);
  return match[1];
}

async function userWithPassword() {
  const made = await makeUser();
  const username = `${made.username}p`;
  const user = await createUser({ username, password: PASSWORD });
  return { user, username };
}

describe('sign-in', () => {
  test('the session cookie is HttpOnly, SameSite=Lax, scoped to /settings, and not Secure over http', async () => {
    const web = new WebClient();
    const page = await web.get('/settings/sign-in');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.text).toContain('<form method="post" action="/settings/sign-in">');
    const cookie = web.lastSetCookie!;
    expect(cookie).toMatch(/^circuits\.sid=/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).toContain('Path=/settings');
    expect(cookie).not.toContain('Secure');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-store');
  });

  test('behind an https proxy the cookie is also Secure', async () => {
    const web = new WebClient({ 'x-forwarded-proto': 'https' });
    await web.get('/settings/sign-in');
    expect(web.lastSetCookie).toMatch(/; Secure/);
  });

  test('the right password signs in with a new session id; a wrong one or none is refused', async () => {
    const { username } = await userWithPassword();
    const web = new WebClient();
    const wrong = await web.signIn(username, 'not the password');
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('Wrong username or password.');
    expect(wrong.text).toContain(`value="${username}"`);

    const before = web.cookie;
    const ok = await web.signIn(username);
    expect(ok.status).toBe(303);
    expect(ok.location).toBe('/settings/tokens');
    expect(web.cookie).not.toBe(before);

    const tokens = await web.get('/settings/tokens');
    expect(tokens.status).toBe(200);
    expect(tokens.text).toContain(`<strong data-username>${username}</strong>`);
  });

  test('a user created without a password cannot sign in', async () => {
    const { username } = await makeUser();
    const res = await new WebClient().signIn(username, '');
    expect(res.status).toBe(400);
    const res2 = await new WebClient().signIn(username, 'anything at all');
    expect(res2.status).toBe(401);
    expect(res2.text).toContain('Wrong username or password.');
  });

  test('an unknown user gets the same answer as a wrong password', async () => {
    const res = await new WebClient().signIn('nobody-here', 'whatever123');
    expect(res.status).toBe(401);
    expect(res.text).toContain('Wrong username or password.');
  });

  test('pages need a session: visitors are sent to sign in', async () => {
    const web = new WebClient();
    for (const path of ['/settings', '/settings/tokens', '/settings/blobs']) {
      const res = await web.get(path);
      expect([path, res.status, res.location]).toEqual([path, 303, '/settings/sign-in']);
    }
  });

  test('sign-in is rate limited per client and username, with Retry-After', async () => {
    const { username } = await userWithPassword();
    const web = new WebClient();
    for (let i = 0; i < RATE_LIMIT; i += 1) expect((await web.signIn(username, 'wrong-password')).status).toBe(401);
    const limited = await web.signIn(username);
    expect(limited.status).toBe(429);
    expect(limited.text).toContain('Too many sign-in attempts');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another username from the same client is not affected.
    const other = await userWithPassword();
    expect((await new WebClient().signIn(other.username)).status).toBe(303);
  });

  test('sign-out ends the session', async () => {
    const { username } = await userWithPassword();
    const web = new WebClient();
    await web.signIn(username);
    const stolen = web.cookie;
    const out = await web.post('/settings/sign-out', {}, { csrfFrom: '/settings/tokens' });
    expect(out.status).toBe(303);
    expect(out.location).toBe('/settings/sign-in');
    const replay = new WebClient();
    replay.cookie = stolen;
    expect((await replay.get('/settings/tokens')).status).toBe(303);
  });
});

describe('CSRF', () => {
  test('every POST form without the session token, or with a wrong one, is a 403 page that changes nothing', async () => {
    const { username, user } = await userWithPassword();
    const anonymous = new WebClient();
    await anonymous.get('/settings/sign-in');
    expect((await anonymous.post('/settings/sign-in', { username, password: PASSWORD }, { csrf: null })).status).toBe(
      403,
    );
    expect(
      (await anonymous.post('/settings/sign-in', { username, password: PASSWORD }, { csrf: 'forged' })).status,
    ).toBe(403);

    const web = new WebClient();
    await web.signIn(username);
    const tokensBefore = await ApiToken.count({ where: { user_uid: user.uid } });
    const forged = await web.post('/settings/tokens', { label: 'evil' }, { csrf: null });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('Form expired');
    // A token from another session is no good either.
    const otherToken = csrfOf((await anonymous.get('/settings/sign-in')).text);
    expect((await web.post('/settings/tokens', { label: 'evil' }, { csrf: otherToken })).status).toBe(403);
    expect(await ApiToken.count({ where: { user_uid: user.uid } })).toBe(tokensBefore);

    const form = new FormData();
    form.set('file', new globalThis.Blob(['x']), 'x.txt');
    expect((await web.request('POST', '/settings/blobs', form)).status).toBe(403);
    expect(await Blob.count({ where: { user_uid: user.uid } })).toBe(0);

    expect((await web.post('/settings/sign-out', {}, { csrf: null })).status).toBe(403);
    expect((await web.get('/settings/tokens')).status).toBe(200);
  });
});

describe('API tokens', () => {
  test('create redirects (POST-redirect-GET) and the next page shows the token once; it works against the API; revoke asks first, then ends it', async () => {
    const { username, user } = await userWithPassword();
    const web = new WebClient();
    await web.signIn(username);
    const created = await web.post('/settings/tokens', { label: 'laptop <b>&</b>' }, { csrfFrom: '/settings/tokens' });
    expect(created.status).toBe(303);
    expect(created.location).toBe('/settings/tokens');
    expect(created.text).not.toContain('cst_');
    const shown = await web.get('/settings/tokens');
    const token = /data-new-token>(cst_[A-Za-z0-9_-]+)</.exec(shown.text)![1];
    expect(shown.text).toContain('laptop &lt;b&gt;&amp;&lt;/b&gt;');
    expect(shown.text).not.toContain('<b>&</b>');
    expect(await ApiToken.count({ where: { user_uid: user.uid } })).toBe(1);

    const viewer = await t.gql('{ viewer { username } }', {}, token);
    expect(viewer.data.viewer.username).toBe(username);

    // A reload shows the list without the token and creates nothing.
    const list = await web.get('/settings/tokens');
    expect(list.text).not.toContain(token);
    expect(await ApiToken.count({ where: { user_uid: user.uid } })).toBe(1);
    const row = new RegExp(`<tr data-token-uid="([0-9a-f-]{36})">\\s*<td data-label="Label">laptop &lt;b&gt;`).exec(
      list.text,
    );
    expect(row).not.toBeNull();
    expect(list.text).toMatch(/Last used<\/td>|<time datetime=/);
    expect(list.text).toContain(`href="/settings/tokens/${row![1]}/revoke"`);

    // Revoking asks first: the link shows a confirmation, which changes nothing.
    const confirm = await web.get(`/settings/tokens/${row![1]}/revoke`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain('Revoke “laptop &lt;b&gt;&amp;&lt;/b&gt;”?');
    expect(confirm.text).toContain(`action="/settings/tokens/${row![1]}/revoke"`);
    expect((await t.gql('{ viewer { username } }', {}, token)).data.viewer.username).toBe(username);

    const revoked = await web.post(
      `/settings/tokens/${row![1]}/revoke`,
      {},
      { csrfFrom: `/settings/tokens/${row![1]}/revoke` },
    );
    expect(revoked.status).toBe(303);
    expect((await web.get('/settings/tokens')).text).toContain('Token revoked.');
    expect((await t.gql('{ viewer { username } }', {}, token)).code).toBe('Unauthorized');
    const again = await web.get(`/settings/tokens/${row![1]}/revoke`);
    expect(again.status).toBe(303);
    expect((await web.get('/settings/tokens')).text).toContain('does not exist or is already revoked');
  });

  test('a user cannot revoke another user’s token', async () => {
    const victim = await makeUser();
    const victimToken = await ApiToken.findOne({ where: { user_uid: victim.user.uid } });
    const { username } = await userWithPassword();
    const web = new WebClient();
    await web.signIn(username);
    expect((await web.get(`/settings/tokens/${victimToken!.uid}/revoke`)).status).toBe(303);
    expect((await web.get('/settings/tokens')).text).toContain('does not exist or is already revoked');
    await web.post(`/settings/tokens/${victimToken!.uid}/revoke`, {}, { csrfFrom: '/settings/tokens' });
    expect((await web.get('/settings/tokens')).text).toContain('does not exist or is already revoked');
    expect((await t.gql('{ viewer { username } }', {}, victim.token)).data.viewer.username).toBe(victim.username);
  });

  test('a token created with limits (scope, expiry, circuits, daily credits) shows them and is held to them', async () => {
    const { username, user } = await userWithPassword();
    const web = new WebClient();
    await web.signIn(username);
    const circuitUid = '00000000-0000-4000-8000-000000000002';
    const created = await web.post(
      '/settings/tokens',
      { label: 'ci', scopes: 'runs:read', expires_in_days: '30', circuit_uids: circuitUid, max_credits_per_day: '10' },
      { csrfFrom: '/settings/tokens' },
    );
    expect(created.status).toBe(303);
    const shown = await web.get('/settings/tokens');
    const token = /data-new-token>(cst_[A-Za-z0-9_-]+)</.exec(shown.text)![1];
    expect(shown.text).toMatch(
      /data-token-limits>runs:read · 1 circuit · 10 credits\/day · expires \d{4}-\d\d-\d\d \d\d:\d\d UTC</,
    );
    const row = await ApiToken.findOne({ where: { user_uid: user.uid } });
    expect(row).toMatchObject({ scopes: ['runs:read'], circuit_uids: [circuitUid] });
    expect((await t.gql('{ viewerRuns { totalCount } }', {}, token)).data.viewerRuns.totalCount).toBe(0);
    const refused = await t.gql('mutation { createBoard(input: {name: "b"}) { uid } }', {}, token);
    expect(refused.errors![0]).toMatchObject({
      message: 'This token lacks the scope boards:write',
      extensions: { code: 'NotAllowed' },
    });

    const bad = await web.post(
      '/settings/tokens',
      { label: 'x', scopes: 'runs:all' },
      { csrfFrom: '/settings/tokens' },
    );
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('scopes: unknown scope');
    const badNumber = await web.post(
      '/settings/tokens',
      { label: 'x', max_credits_per_day: 'lots' },
      { csrfFrom: '/settings/tokens' },
    );
    expect(badNumber.status).toBe(400);
    expect(badNumber.text).toContain('max_credits_per_day must be a whole number');
  });

  test('a label over 100 characters is shown as an error', async () => {
    const { username } = await userWithPassword();
    const web = new WebClient();
    await web.signIn(username);
    const res = await web.post('/settings/tokens', { label: 'x'.repeat(101) }, { csrfFrom: '/settings/tokens' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('label must be at most 100 characters');
  });
});

describe('blobs', () => {
  async function upload(web: WebClient, name: string, content: Buffer | string) {
    const csrf = csrfOf((await web.get('/settings/blobs')).text);
    const form = new FormData();
    form.set('_csrf', csrf);
    form.set('file', new globalThis.Blob([new Uint8Array(Buffer.from(content))]), name);
    return web.request('POST', '/settings/blobs', form);
  }

  test('upload stores the file, shows its uid, lists it, and the API serves it', async () => {
    const { username, user } = await userWithPassword();
    const web = new WebClient();
    await web.signIn(username);
    const content = Buffer.from('{"answer": 42}');
    const res = await upload(web, 'answer.json', content);
    expect(res.status).toBe(303);
    expect(res.location).toBe('/settings/blobs');

    const page = await web.get('/settings/blobs');
    const uid = /data-flash-code>([0-9a-f-]{36})</.exec(page.text)![1];
    expect(page.text).toContain(`<tr data-blob-uid="${uid}">`);
    expect(page.text).toContain('answer.json');
    expect(page.text).toContain('application/json');
    expect(page.text).toContain(`data-copy="${uid}"`);
    expect(page.text).toContain(sha256(content).slice(0, 12));
    // The notice is shown once.
    expect((await web.get('/settings/blobs')).text).not.toContain('data-flash-code');

    const meta = await t.rest('GET', `/blobs/${uid}`);
    expect(meta.body.payload).toMatchObject({
      user_uid: user.uid,
      hash: sha256(content),
      bytes: content.length,
      mime_type: 'application/json',
    });
  });

  test('a file over BLOB_MAX_BYTES is refused with the error on the page, and nothing is stored', async () => {
    const { username, user } = await userWithPassword();
    const web = new WebClient();
    await web.signIn(username);
    const res = await upload(web, 'big.bin', Buffer.alloc(MAX_BYTES + 1, 1));
    expect(res.status).toBe(413);
    expect(res.text).toContain(`The file is larger than the limit of ${MAX_BYTES} bytes.`);
    expect(await Blob.count({ where: { user_uid: user.uid } })).toBe(0);
    expect((await upload(web, 'fits.bin', Buffer.alloc(MAX_BYTES, 1))).status).toBe(303);
  });

  test('posting without a file, or an empty file, shows an error', async () => {
    const { username } = await userWithPassword();
    const web = new WebClient();
    await web.signIn(username);
    const csrf = csrfOf((await web.get('/settings/blobs')).text);
    const form = new FormData();
    form.set('_csrf', csrf);
    const none = await web.request('POST', '/settings/blobs', form);
    expect(none.status).toBe(400);
    expect(none.text).toContain('Choose a file to upload.');
    const empty = await upload(web, 'empty.txt', '');
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('The file is empty');
  });

  test('each user lists only their own blobs, with names escaped', async () => {
    const a = await userWithPassword();
    const b = await userWithPassword();
    const webA = new WebClient();
    await webA.signIn(a.username);
    await upload(webA, '<img src=x onerror=alert(1)>.txt', 'mine');
    const webB = new WebClient();
    await webB.signIn(b.username);
    expect((await webB.get('/settings/blobs')).text).toContain('No blobs yet.');
    const pageA = (await webA.get('/settings/blobs')).text;
    expect(pageA).toContain('&lt;img src=x onerror=alert(1)&gt;.txt');
    expect(pageA).not.toContain('<img src=x');
  });
});

describe('runs and credits', () => {
  test('the Runs page lists the user’s runs (state, circuit, failure, credits), filtered by state; the Credits page shows balance and ledger', async () => {
    const owner = await makeUser();
    const { username, user } = await userWithPassword();
    await grantCredits(t.app.services.sequelize, { uid: user.uid }, 5);
    const { token } = await createApiToken(user, 'runs');
    const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
    const failing = await makeRunnableCircuit(owner, {
      query_schema: { type: 'object' },
      steps: [{ id: 'boom', kind: 'transform', expression: '$error("boom")' }],
    });
    const ok = await submitRun(t, token, hello.adaptorUid, { input: { name: 'x' } });
    const bad = await submitRun(t, token, failing.adaptorUid, { input: {} });
    await waitForRun(t, ok.body.payload.uid, token);
    await waitForRun(t, bad.body.payload.uid, token);

    const web = new WebClient();
    expect((await web.get('/settings/runs')).status).toBe(303);
    await web.signIn(username);
    const runs = await web.get('/settings/runs');
    expect(runs.status).toBe(200);
    const uids = [...runs.text.matchAll(/<tr data-run-uid="([0-9a-f-]{36})">/g)].map((m) => m[1]);
    expect(uids).toEqual([bad.body.payload.uid, ok.body.payload.uid]);
    expect(runs.text).toContain(`${owner.username}/${hello.circuit.name}`);
    expect(runs.text).toContain('<span class="state EXCEPTION">EXCEPTION</span>');
    expect(runs.text).toMatch(/data-failure><span><span class="muted">StepFailed:<\/span> [^<]+<\/span>/);
    const failed = await web.get('/settings/runs?state=EXCEPTION');
    expect([...failed.text.matchAll(/<tr data-run-uid="([0-9a-f-]{36})">/g)].map((m) => m[1])).toEqual([
      bad.body.payload.uid,
    ]);
    expect((await web.get('/settings/runs?state=bogus&page=x')).status).toBe(200);

    const credits = await web.get('/settings/credits');
    expect(credits.status).toBe(200);
    expect(credits.text).toContain('<strong data-balance>3</strong>');
    expect(credits.text).toContain('<strong data-available>3</strong>');
    const amounts = [...credits.text.matchAll(/data-label="Amount" class="num[^"]*">([^<]+)</g)].map((m) => m[1]);
    expect(amounts).toEqual(['-1', '-1', '+5']);
  });
});

test('unknown settings paths are a 404 page; assets are served', async () => {
  const web = new WebClient();
  expect((await web.get('/settings/nope')).status).toBe(404);
  const css = await web.get('/settings/assets/settings.css');
  expect(css.status).toBe(200);
  expect(css.headers.get('content-type')).toMatch(/^text\/css/);
  expect((await web.get('/settings/assets/settings.js')).headers.get('content-type')).toMatch(/javascript/);
});
