import { useTestApp } from './support/app';
import { HELLO_DEFINITION, makeCircuit, makeUser } from './support/factories';
import { createUser } from '../src/commands/create-user';
import { MAX_API_TOKENS_PER_USER } from '../src/commands/create-api-token';
import { MAX_SCHEDULES_PER_USER } from '../src/schedules/schedule-commands';
import { QueryTypes } from 'sequelize';
import { ApiToken } from '../src/models';

jest.setTimeout(120_000);

const CONCURRENT = 150;
const t = useTestApp();

const count = async (sql: string, userUid: string) =>
  Number((await ApiToken.sequelize!.query<{ n: string }>(sql, { bind: [userUid], type: QueryTypes.SELECT }))[0].n);

test(`${CONCURRENT} concurrent schedule creates by one user end with exactly ${MAX_SCHEDULES_PER_USER} schedules, the rest 409`, async () => {
  const owner = await makeUser();
  const circuitUid = (await makeCircuit(owner, {}, HELLO_DEFINITION)).circuit.uid;
  const answers = await Promise.all(
    Array.from({ length: CONCURRENT }, () =>
      t.rest('POST', `/circuits/${circuitUid}/schedules`, {
        token: owner.token,
        body: { cron: '0 0 9 * * 1-5', input: { name: 'Ada' } },
      }),
    ),
  );
  const statuses = answers.map((a) => a.status);
  expect(statuses.filter((s) => s === 200)).toHaveLength(MAX_SCHEDULES_PER_USER);
  expect(statuses.filter((s) => s === 409)).toHaveLength(CONCURRENT - MAX_SCHEDULES_PER_USER);
  expect(await count('SELECT count(*) AS n FROM circuit_schedules WHERE user_uid = $1', owner.user.uid)).toBe(
    MAX_SCHEDULES_PER_USER,
  );
  // Another user is not held by the first one's limit.
  const other = await makeUser();
  const otherCircuit = (await makeCircuit(other, {}, HELLO_DEFINITION)).circuit.uid;
  expect(
    (
      await t.rest('POST', `/circuits/${otherCircuit}/schedules`, {
        token: other.token,
        body: { cron: '0 0 9 * * 1-5', input: { name: 'Bo' } },
      })
    ).status,
  ).toBe(200);
});

test(`${CONCURRENT} concurrent API token creates by one user end with exactly ${MAX_API_TOKENS_PER_USER} tokens, the rest 409`, async () => {
  const password = 'correct horse battery';
  const user = await createUser({ username: `tok${Date.now().toString(36)}`, password });
  let cookie = '';
  const page = async (method: string, path: string, body?: URLSearchParams) => {
    const res = await fetch(`${t.url}${path}`, { method, headers: cookie ? { cookie } : {}, body, redirect: 'manual' });
    const set = res.headers.get('set-cookie');
    if (set) cookie = set.split(';')[0];
    return { status: res.status, text: await res.text() };
  };
  const csrf = async (path: string) => /name="_csrf" value="([^"]+)"/.exec((await page('GET', path)).text)![1];
  const signedIn = await page(
    'POST',
    '/settings/sign-in',
    new URLSearchParams({ username: user.username, password, _csrf: await csrf('/settings/sign-in') }),
  );
  expect(signedIn.status).toBe(303);
  const token = await csrf('/settings/tokens');

  const answers = await Promise.all(
    Array.from({ length: CONCURRENT }, (_, i) =>
      page('POST', '/settings/tokens', new URLSearchParams({ label: `t${i}`, _csrf: token })),
    ),
  );
  const statuses = answers.map((a) => a.status);
  expect(statuses.filter((s) => s === 303)).toHaveLength(MAX_API_TOKENS_PER_USER);
  expect(statuses.filter((s) => s === 409)).toHaveLength(CONCURRENT - MAX_API_TOKENS_PER_USER);
  expect(answers.find((a) => a.status === 409)!.text).toContain(
    `You already have ${MAX_API_TOKENS_PER_USER} API tokens`,
  );
  expect(await count('SELECT count(*) AS n FROM api_tokens WHERE user_uid = $1 AND revoked_at IS NULL', user.uid)).toBe(
    MAX_API_TOKENS_PER_USER,
  );
});
