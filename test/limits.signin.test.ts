import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import { spawnServiceProcess, ServiceProcess } from './support/run-factories';
import { paced, percentile } from './support/latency';
import { createUser } from '../src/commands/create-user';
import { webBrowser } from './support/web-browser';

const browser = (ip: string) => webBrowser(api.url!, ip);

jest.setTimeout(240_000);

const PASSWORD = 'correct horse battery';
const ATTACKER = '203.0.113.7';
const VICTIM = '198.51.100.20';

let t: TestApp;
let api: ServiceProcess;

beforeAll(async () => {
  t = await startTestApp({ runWorker: false });
  // Behind a TLS proxy on loopback, so each client is told apart by X-Forwarded-For.
  api = await spawnServiceProcess('api', t.databaseUrl, { TRUST_PROXY: 'loopback' });
});
afterAll(async () => {
  await api?.kill();
  await t.close();
});

test("359 sign-in attempts with rotating usernames are limited; a real user's sign-in and a blob download stay within 2x idle + 100 ms", async () => {
  const victim = await createUser({ username: `victim${Date.now().toString(36)}`, password: PASSWORD });
  await makeUser();
  const web = browser(VICTIM);
  expect((await web.signIn(victim.username, PASSWORD)).status).toBe(303);
  // A 256 KiB blob, uploaded through the settings page; downloaded through its signed URL.
  const form = new FormData();
  form.set('_csrf', await web.csrf('/settings/blobs'));
  form.set('file', new Blob([Buffer.alloc(256 * 1024, 7)]), 'data.bin');
  const uploaded = await web.request('POST', '/settings/blobs', form);
  expect(uploaded.status).toBe(303);
  const uid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/.exec(
    (await web.request('GET', '/settings/blobs')).text,
  )![0];
  const download = async () => {
    const started = performance.now();
    const redirect = await fetch(`${api.url}/api/v1/blobs/${uid}/download`, {
      redirect: 'manual',
      headers: { 'x-forwarded-for': VICTIM },
    });
    const res = await fetch(new URL(redirect.headers.get('location')!, api.url), {
      headers: { 'x-forwarded-for': VICTIM },
    });
    const bytes = (await res.arrayBuffer()).byteLength;
    expect(bytes).toBe(256 * 1024);
    return performance.now() - started;
  };
  const signInOnce = async () => {
    web.signOut();
    const result = await web.signIn(victim.username, PASSWORD);
    expect(result.status).toBe(303);
    return result.ms;
  };

  const idleSignIn: number[] = [];
  const idleDownload: number[] = [];
  for (let i = 0; i < 3; i++) {
    idleSignIn.push(await signInOnce());
    idleDownload.push(await download());
  }

  // The attack: 359 attempts in 25 s from one address, every one a new username.
  const attacker = browser(ATTACKER);
  const attackToken = await attacker.csrf('/settings/sign-in');
  let attackStatuses: number[] = [];
  const attack = paced(
    Array.from({ length: 359 }, (_, i) => i),
    70,
    async (i) => {
      const res = await attacker.request(
        'POST',
        '/settings/sign-in',
        new URLSearchParams({ _csrf: attackToken, username: `guess${i}`, password: `pw${i}` }),
      );
      return res.status;
    },
  ).then((statuses) => {
    attackStatuses = statuses;
  });

  // The real user signs in and downloads throughout the attack's 25 s (5 times, the per-account limit allowing).
  const busySignIn: number[] = [];
  const busyDownload: number[] = [];
  for (let i = 0; i < 5; i++) {
    busySignIn.push(await signInOnce());
    busyDownload.push(await download());
    await new Promise((resolve) => setTimeout(resolve, 4_000));
  }
  await attack;

  expect(attackStatuses.filter((s) => s >= 500)).toEqual([]);
  // Each attempt over the per-client limit is refused before any password is hashed.
  expect(attackStatuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(359 - 30);
  expect(attackStatuses.filter((s) => s === 401).length).toBeLessThanOrEqual(30);
  const bound = (idle: number[]) => 2 * percentile(idle, 0.5) + 100;
  expect(percentile(busySignIn, 0.5)).toBeLessThanOrEqual(bound(idleSignIn));
  expect(percentile(busyDownload, 0.5)).toBeLessThanOrEqual(bound(idleDownload));
});

test('attempts at one account from many addresses are limited per account', async () => {
  const user = await createUser({ username: `target${Date.now().toString(36)}`, password: PASSWORD });
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++)
    statuses.push((await browser(`192.0.2.${i + 1}`).signIn(user.username, 'wrong password')).status);
  expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
  expect(statuses.slice(10)).toEqual([429, 429]);
});
