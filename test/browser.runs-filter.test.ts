import fs from 'node:fs';
import path from 'node:path';
import { QueryTypes } from 'sequelize';
import type { Page } from 'playwright-core';
import { browserSuite } from './support/browser';
import { HELLO_DEFINITION, makeUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import { PROJECT_ROOT } from '../src/paths';

const PASSWORD = 'browser-test-password';
const DESKTOP = { viewport: { width: 1280, height: 900 } };
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

const suite = browserSuite('browser.runs-filter.test');
const { maybe } = suite;

/** Screenshots go to docs/screenshots when missing or with UPDATE_SCREENSHOTS=1, else to the suite's data dir. */
async function shot(page: Page, name: string): Promise<void> {
  const docs = path.join(PROJECT_ROOT, 'docs', 'screenshots', `${name}.png`);
  const target =
    process.env.UPDATE_SCREENSHOTS === '1' || !fs.existsSync(docs) ? docs : path.join(suite.dataDir, `${name}.png`);
  await page.screenshot({ path: target, fullPage: true });
}

maybe(
  '/settings → Runs: filter by tag, state and circuit, cancel the filtered runs in flight and replay the ended ones; a form sent twice acts once',
  async () => {
    const owner = await makeUser({ username: 'importer', password: PASSWORD, credits: 100 });
    const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION, { name: 'greeter' });
    const later = await makeRunnableCircuit(owner, HELLO_DEFINITION, { name: 'nightly' });
    // The import: 2 runs done, 5 waiting for their delayed start; and one run of the owner outside it.
    const done: string[] = [];
    for (const name of ['Ada', 'Bo']) {
      const res = await submitRun(suite.t, owner.token, hello.adaptorUid, { input: { name }, tags: ['import-42'] });
      done.push((await waitForRun(suite.t, res.body.payload.uid as string, owner.token)).uid as string);
    }
    const waiting: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await submitRun(suite.t, owner.token, later.adaptorUid, {
        input: { name: `n${i}` },
        tags: ['import-42'],
        delay_s: 3600,
      });
      waiting.push(res.body.payload.uid as string);
    }
    const outside = await submitRun(suite.t, owner.token, later.adaptorUid, { input: { name: 'keep' }, delay_s: 3600 });

    const context = await suite.browser.newContext(DESKTOP);
    const page = await context.newPage();
    await page.goto(`${suite.t.url}/settings`);
    await page.getByLabel('Username').fill('importer');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/settings/tokens');
    await page.getByRole('link', { name: 'Runs' }).click();
    await page.waitForURL('**/settings/runs');
    const count = async (what: 'in-flight' | 'ended') => Number(await page.locator(`[data-${what}]`).innerText());
    const listed = () => page.locator('tr[data-run-uid]').evaluateAll((trs) => trs.map((tr) => tr.dataset.runUid));
    expect([await count('in-flight'), await count('ended')]).toEqual([6, 2]);

    // Filter by tag: the import's 7 runs.
    await page.getByLabel('Tag').fill('import-42');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.waitForURL('**/settings/runs?tag=import-42');
    expect((await listed()).sort()).toEqual([...done, ...waiting].sort());
    expect([await count('in-flight'), await count('ended')]).toEqual([5, 2]);
    expect(await page.locator('[data-matching]').innerText()).toContain('Runs with tag import-42');
    await shot(page, 'settings-runs-filter-desktop');

    // Cancel the 5 in flight: the filter stays, the runs end Canceled, the one outside the filter is untouched.
    await page.getByRole('button', { name: 'Cancel 5 runs in flight' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: '5 runs asked to stop, of 5 runs of the filter in flight' })
      .waitFor();
    expect(page.url()).toBe(`${suite.t.url}/settings/runs?tag=import-42`);
    expect([await count('in-flight'), await count('ended')]).toEqual([0, 7]);
    expect(await page.getByRole('button', { name: 'Cancel 0 runs in flight' }).isDisabled()).toBe(true);
    for (const uid of waiting) expect((await waitForRun(suite.t, uid, owner.token)).error.code).toBe('Canceled');
    const kept = await suite.t.rest('GET', `/circuit-runs/${outside.body.payload.uid}`, { token: owner.token });
    expect(kept.body.payload.state).toBe('PROVISIONED');

    // Narrow to the completed runs of one circuit, and replay them: one batch of 2.
    await page.getByLabel('State', { exact: true }).selectOption('COMPLETED');
    await page.getByLabel('Circuit', { exact: true }).selectOption({ label: 'importer/greeter' });
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.waitForURL(`**/settings/runs?state=COMPLETED&circuit_uid=${hello.circuit.uid}&tag=import-42`);
    expect((await listed()).sort()).toEqual([...done].sort());
    const replayForm = page.locator('form[action="/settings/runs/replay"]');
    const fields = await replayForm.evaluate((form) =>
      Object.fromEntries(new FormData(form as HTMLFormElement) as unknown as Iterable<[string, string]>),
    );
    await page.getByRole('button', { name: 'Replay 2 ended runs' }).click();
    const status = page.getByRole('status').filter({ hasText: 'replayed as batch' });
    await status.waitFor();
    const batchUid = /batch ([0-9a-f-]{36})/.exec(await status.innerText())![1];
    const batch = await suite.t.rest('GET', `/batches/${batchUid}`, { token: owner.token });
    expect(batch.body.payload).toMatchObject({ total: 2, circuit_uid: hello.circuit.uid });

    // The same form again (a double click, a resent form): answered the first batch, nothing replayed again.
    const again = await page.request.post(`${suite.t.url}/settings/runs/replay`, { form: fields, maxRedirects: 0 });
    expect(again.status()).toBe(303);
    await page.goto(`${suite.t.url}/settings/runs`);
    expect(await page.getByRole('status').innerText()).toContain(`replayed as batch ${batchUid}`);
    const [batches] = await suite.t.app.services.sequelize.query<{ n: string }>(
      'SELECT count(*) AS n FROM circuit_batches WHERE user_uid = $1',
      { bind: [owner.user.uid], type: QueryTypes.SELECT },
    );
    expect(Number(batches.n)).toBe(1);
    // Without the session's CSRF token nothing is done.
    const { _csrf: _dropped, ...withoutCsrf } = fields;
    const forged = await page.request.post(`${suite.t.url}/settings/runs/cancel`, {
      form: withoutCsrf,
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);

    const phone = await suite.browser.newContext({ ...PHONE, storageState: await context.storageState() });
    const phonePage = await phone.newPage();
    await phonePage.goto(`${suite.t.url}/settings/runs?tag=import-42`);
    expect(
      await phonePage.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth),
    ).toBeLessThanOrEqual(0);
    await Promise.all([context.close(), phone.close()]);
  },
  90_000,
);
