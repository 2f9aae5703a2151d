import { browserSuite } from './support/browser';
import { createUser } from '../src/commands/create-user';
import { createApiToken } from '../src/commands/create-api-token';

const PASSWORD = 'browser-test-password';
const suite = browserSuite('browser.webhooks.test');
const { maybe } = suite;

maybe(
  'a user sees their webhook secret in /settings and rotates it; the API then answers the new one',
  async () => {
    const user = await createUser({ username: 'hooky', name: 'Hooky', password: PASSWORD });
    const { token } = await createApiToken(user, 'api');
    const apiSecret = async () =>
      (await suite.t.rest('GET', '/webhooks/default/secret', { token })).body.payload.key as string;
    const page = await (await suite.browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    await page.goto(`${suite.t.url}/settings`);
    await page.getByLabel('Username').fill('hooky');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/settings/tokens');

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForURL('**/settings/webhooks');
    const shown = (await page.locator('[data-webhook-secret]').textContent())!.trim();
    expect(shown).toMatch(/^whsec_/);
    expect(await apiSecret()).toBe(shown);

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    // The POST answers 303 back to this page, which then carries the notice.
    await page.getByRole('status').waitFor({ timeout: 10_000 });
    expect(await page.getByRole('status').textContent()).toContain('Secret rotated');
    const rotated = (await page.locator('[data-webhook-secret]').textContent())!.trim();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(shown);
    expect(await apiSecret()).toBe(rotated);
  },
  60_000,
);

maybe('rotating without the form token changes nothing', async () => {
  const user = await createUser({ username: 'forger', password: PASSWORD });
  const { token } = await createApiToken(user, 'api');
  const before = (await suite.t.rest('GET', '/webhooks/default/secret', { token })).body.payload.key;
  const res = await fetch(`${suite.t.url}/settings/webhooks/rotate`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: '',
    redirect: 'manual',
  });
  expect([303, 403]).toContain(res.status);
  expect((await suite.t.rest('GET', '/webhooks/default/secret', { token })).body.payload.key).toBe(before);
});
