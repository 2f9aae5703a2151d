import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { browserSuite } from './support/browser';
import { createUser } from '../src/commands/create-user';
import { ApiToken } from '../src/models';
import { createApiToken } from '../src/commands/create-api-token';
import { HELLO_DEFINITION, makeUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import { makeWaitingRun, stepRow } from './support/approval-factories';
import { PROJECT_ROOT } from '../src/paths';

const SCREENSHOTS = path.join(PROJECT_ROOT, 'docs', 'screenshots');
const PASSWORD = 'browser-test-password';
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
const DESKTOP = { viewport: { width: 1280, height: 800 } };

const suite = browserSuite('browser.settings.test');
const { maybe } = suite;

/**
 * Screenshots go to docs/screenshots when missing or with UPDATE_SCREENSHOTS=1 (so ordinary runs
 * leave the checked-in images alone), else to suite.dataDir.
 */
async function shot(page: Page, name: string): Promise<void> {
  const docs = path.join(SCREENSHOTS, `${name}.png`);
  const target =
    process.env.UPDATE_SCREENSHOTS === '1' || !fs.existsSync(docs) ? docs : path.join(suite.dataDir, `${name}.png`);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  await page.screenshot({ path: target, fullPage: true });
}

async function signIn(page: Page, username: string): Promise<void> {
  await page.goto(`${suite.t.url}/settings`);
  await page.waitForURL('**/settings/sign-in');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL('**/settings/tokens');
}

async function uploadFile(page: Page, name: string, mimeType: string, buffer: Buffer): Promise<string> {
  await page.getByLabel('File').setInputFiles({ name, mimeType, buffer });
  await page.getByRole('button', { name: 'Upload' }).click();
  // The POST answers 303 to the blobs page, which lists the file and shows its new uid once.
  const row = page.locator('tr[data-blob-uid]', { hasText: name });
  await row.waitFor({ timeout: 10_000 });
  const uid = (await page.locator('[data-flash-code]').textContent())!.trim();
  expect(await row.getAttribute('data-blob-uid')).toBe(uid);
  return uid;
}

maybe(
  'a user signs in, creates a token, uploads a file, and the API serves it with that token',
  async () => {
    await createUser({ username: 'ada', name: 'Ada', password: PASSWORD });
    const desktop: BrowserContext = await suite.browser.newContext({
      ...DESKTOP,
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    const page = await desktop.newPage();

    await page.goto(`${suite.t.url}/settings`);
    await page.waitForURL('**/settings/sign-in');
    await shot(page, 'settings-sign-in-desktop');

    // A wrong password is refused on the page.
    await page.getByLabel('Username').fill('ada');
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Wrong username or password.').waitFor();

    await signIn(page, 'ada');
    await page.getByLabel('Label').fill('ci');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByLabel('Label').fill('laptop');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.locator('[data-new-token]').textContent())!.trim();
    expect(token).toMatch(/^cst_[A-Za-z0-9_-]{20,}$/);
    expect(await page.locator('tr[data-token-uid]').count()).toBe(2);
    await shot(page, 'settings-tokens-desktop');

    await page.getByRole('link', { name: 'Blobs' }).click();
    await page.waitForURL('**/settings/blobs');
    await uploadFile(page, 'prompts.json', 'application/json', Buffer.from('{"system": "Be brief."}\n'));
    await uploadFile(page, 'notes.txt', 'text/plain', Buffer.from('Meeting notes\n'));
    const content = crypto.randomBytes(4096);
    const uid = await uploadFile(page, 'weights.bin', 'application/octet-stream', content);
    expect(uid).toMatch(/^[0-9a-f-]{36}$/);
    await page.locator(`tr[data-blob-uid="${uid}"]`).waitFor();
    await shot(page, 'settings-blobs-desktop');

    // The copy button puts the full uid on the clipboard.
    const copy = page.locator(`tr[data-blob-uid="${uid}"] [data-copy]`);
    await copy.click();
    await page.locator(`tr[data-blob-uid="${uid}"]`).getByText('Copied').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(uid);

    // An upload error is shown on the page.
    await page
      .getByRole('button', { name: 'Upload' })
      .evaluate((button) => (button.closest('form')!.noValidate = true));
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.getByText('Choose a file to upload.').waitFor();

    // The API, with the token made in the browser.
    const meta = await suite.t.rest('GET', `/blobs/${uid}`, { token });
    expect(meta.status).toBe(200);
    expect(meta.body.payload).toMatchObject({
      uid,
      bytes: content.length,
      hash: crypto.createHash('sha256').update(content).digest('hex'),
      can_delete: false,
      total_reads: 1,
    });
    const download = await fetch(`${suite.t.url}/api/v1/blobs/${uid}/download`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(download.status).toBe(200);
    expect(download.redirected).toBe(true);
    expect(Buffer.from(await download.arrayBuffer()).equals(content)).toBe(true);

    // The same pages at phone width.
    const state = await desktop.storageState();
    const phone = await suite.browser.newContext({ ...PHONE, storageState: state });
    const phonePage = await phone.newPage();
    await phonePage.goto(`${suite.t.url}/settings/tokens`);
    await shot(phonePage, 'settings-tokens-phone');
    await phonePage.goto(`${suite.t.url}/settings/blobs`);
    await shot(phonePage, 'settings-blobs-phone');
    const overflow = await phonePage.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    const anonymousPhone = await suite.browser.newContext(PHONE);
    const signInPhone = await anonymousPhone.newPage();
    await signInPhone.goto(`${suite.t.url}/settings/sign-in`);
    await shot(signInPhone, 'settings-sign-in-phone');

    // Sign out ends the session.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/settings/sign-in');
    await page.goto(`${suite.t.url}/settings/tokens`);
    expect(new URL(page.url()).pathname).toBe('/settings/sign-in');

    await Promise.all([desktop.close(), phone.close(), anonymousPhone.close()]);
  },
  90_000,
);

maybe(
  'creating a token answers with a redirect: reloading shows no second token and the value no more; revoking asks first',
  async () => {
    const user = await createUser({ username: 'prg', password: PASSWORD });
    const activeTokens = () => ApiToken.count({ where: { user_uid: user.uid, revoked_at: null } });
    const context = await suite.browser.newContext(DESKTOP);
    const page = await context.newPage();
    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') posts.push(new URL(request.url()).pathname);
    });
    await signIn(page, 'prg');
    expect(await activeTokens()).toBe(0);

    await page.getByLabel('Label').fill('deploy');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.locator('[data-new-token]').waitFor();
    expect(new URL(page.url()).pathname).toBe('/settings/tokens');
    const token = (await page.locator('[data-new-token]').textContent())!.trim();
    expect(token).toMatch(/^cst_/);
    expect(await activeTokens()).toBe(1);
    expect(await page.locator('tr[data-token-uid]').count()).toBe(1);
    expect(posts.filter((p) => p === '/settings/tokens')).toHaveLength(1);

    // The page on screen came from a GET: reloading it posts nothing and shows the token no more.
    await page.reload();
    await page.locator('tr[data-token-uid]').first().waitFor();
    expect(posts.filter((p) => p === '/settings/tokens')).toHaveLength(1);
    expect(await activeTokens()).toBe(1);
    expect(await page.locator('tr[data-token-uid]').count()).toBe(1);
    expect(await page.locator('[data-new-token]').count()).toBe(0);
    expect(await page.content()).not.toContain(token);
    expect((await suite.t.rest('GET', '/users/credit-ledger', { token })).status).toBe(200);

    // Revoke asks first; Cancel keeps the token.
    await page.getByRole('link', { name: 'Revoke deploy' }).click();
    await page.getByRole('heading', { name: 'Revoke “deploy”?' }).waitFor();
    await page.getByRole('link', { name: 'Cancel' }).click();
    await page.waitForURL('**/settings/tokens');
    expect(await page.locator('tr[data-token-uid]').count()).toBe(1);
    expect(await activeTokens()).toBe(1);
    expect((await suite.t.rest('GET', '/users/credit-ledger', { token })).status).toBe(200);

    // Confirming revokes it, at once for the API too.
    await page.getByRole('link', { name: 'Revoke deploy' }).click();
    await page.getByRole('button', { name: 'Revoke token' }).click();
    await page.waitForURL('**/settings/tokens');
    await page.getByRole('status').filter({ hasText: 'Token revoked.' }).waitFor();
    expect(await page.locator('tr[data-token-uid]').count()).toBe(0);
    expect(await activeTokens()).toBe(0);
    expect((await suite.t.rest('GET', '/users/credit-ledger', { token })).status).toBe(401);
    await page.reload();
    expect(await page.getByRole('status').count()).toBe(0);
    await context.close();
  },
  60_000,
);

maybe(
  'the Runs and Credits pages show what the API says: state, circuit, failure reason, credits, balance',
  async () => {
    const owner = await makeUser({ username: 'runner', password: PASSWORD, credits: 20 });
    const greeter = await makeRunnableCircuit(owner, HELLO_DEFINITION, { name: 'greeter' });
    const failing = await makeRunnableCircuit(
      owner,
      {
        query_schema: { type: 'object' },
        steps: [{ id: 'check', kind: 'transform', expression: '$error("the input has no order id")' }],
      },
      { name: 'order-check' },
    );
    const completed = await waitForRun(
      suite.t,
      (await submitRun(suite.t, owner.token, greeter.adaptorUid, { input: { name: 'Ada' } })).body.payload.uid,
      owner.token,
    );
    const failed = await waitForRun(
      suite.t,
      (await submitRun(suite.t, owner.token, failing.adaptorUid, { input: {} })).body.payload.uid,
      owner.token,
    );
    expect([completed.state, failed.state]).toEqual(['COMPLETED', 'EXCEPTION']);

    const apiRuns = (await suite.t.rest('GET', '/users/circuit-runs', { token: owner.token })).body.data as any[];
    const ledger = (await suite.t.rest('GET', '/users/credit-ledger', { token: owner.token })).body.data as any[];
    expect(apiRuns.map((run) => run.uid)).toEqual([failed.uid, completed.uid]);
    const charged = (uid: string) => -ledger.find((row) => row.run_uid === uid).amount as number;

    const context = await suite.browser.newContext(DESKTOP);
    const page = await context.newPage();
    await signIn(page, 'runner');
    await page.getByRole('link', { name: 'Runs' }).click();
    await page.waitForURL('**/settings/runs');
    const rows = page.locator('tr[data-run-uid]');
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run-uid')))).toEqual(
      apiRuns.map((run) => run.uid),
    );
    const cells = async (uid: string) => {
      const row = page.locator(`tr[data-run-uid="${uid}"]`);
      const text = async (label: string) => (await row.locator(`td[data-label="${label}"]`).innerText()).trim();
      return {
        circuit: await text('Circuit'),
        state: await text('State'),
        failure: await text('Failure'),
        credits: await text('Credits'),
      };
    };
    for (const run of apiRuns) {
      const shown = await cells(run.uid);
      expect(shown.state).toBe(run.state);
      expect(shown.circuit).toBe(`runner/${run.circuit_uid === greeter.circuit.uid ? 'greeter' : 'order-check'}`);
      expect(shown.credits).toBe(String(charged(run.uid)));
      if (run.state === 'EXCEPTION') {
        expect(run.error.message).toContain('the input has no order id');
        expect(shown.failure).toBe(`${run.error.code}: ${run.error.message}`);
      } else {
        expect(shown.failure).toBe('');
      }
    }
    await shot(page, 'settings-runs-desktop');

    // Filtering by state lists only those runs.
    await page.getByRole('navigation', { name: 'Filter by state' }).getByRole('link', { name: 'Exception' }).click();
    await page.waitForURL('**/settings/runs?state=EXCEPTION');
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run-uid')))).toEqual([failed.uid]);

    await page.getByRole('link', { name: 'Credits' }).click();
    await page.waitForURL('**/settings/credits');
    const balance = ledger[0].balance_after as number;
    expect(balance).toBe(20 - charged(completed.uid) - charged(failed.uid));
    expect(ledger.reduce((sum, row) => sum + Number(row.amount), 0)).toBe(balance);
    expect(Number(await page.locator('[data-balance]').innerText())).toBe(balance);
    expect(Number(await page.locator('[data-held]').innerText())).toBe(0);
    expect(Number(await page.locator('[data-available]').innerText())).toBe(balance);
    const ledgerRows = await page.locator('tr[data-ledger-uid]').evaluateAll((trs) =>
      trs.map((tr) => ({
        uid: tr.getAttribute('data-ledger-uid'),
        amount: Number(tr.querySelector('td[data-label="Amount"]')!.textContent!.replace('+', '')),
        balance_after: Number(tr.querySelector('td[data-label="Balance after"]')!.textContent),
      })),
    );
    expect(ledgerRows).toEqual(
      ledger.map((row) => ({ uid: row.uid, amount: Number(row.amount), balance_after: Number(row.balance_after) })),
    );
    await shot(page, 'settings-credits-desktop');

    const phone = await suite.browser.newContext({ ...PHONE, storageState: await context.storageState() });
    const phonePage = await phone.newPage();
    await phonePage.goto(`${suite.t.url}/settings/runs`);
    await shot(phonePage, 'settings-runs-phone');
    expect(
      await phonePage.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth),
    ).toBeLessThanOrEqual(0);
    await Promise.all([context.close(), phone.close()]);
  },
  60_000,
);

maybe(
  'the Runs page shows a run waiting for approval with its prompt; Approve and Reject record the decision through the same command',
  async () => {
    const owner = await makeUser({ username: 'approver', password: PASSWORD });
    const first = await makeWaitingRun(owner, { prompt: 'Send the invoice to ACME?', circuitName: 'invoicing' });
    const second = await makeWaitingRun(owner, {
      prompt: 'Delete the old backups?',
      stepId: 'cleanup',
      circuitName: 'housekeeping',
    });
    const someoneElse = await makeWaitingRun(await makeUser(), { prompt: 'Not yours' });
    const woken: string[] = [];
    const stops = [first, second].map(({ run }) =>
      suite.t.app.runtime.bus.subscribe(run.uid, (event) => {
        if (event.wake) woken.push(event.uid);
      }),
    );

    const context = await suite.browser.newContext(DESKTOP);
    const page = await context.newPage();
    await signIn(page, 'approver');
    await page.getByRole('link', { name: 'Runs' }).click();
    await page.waitForURL('**/settings/runs');
    const waiting = page.locator('[data-waiting-run]');
    expect(
      await waiting.evaluateAll((cards) =>
        cards.map((card) => [card.getAttribute('data-waiting-run'), card.getAttribute('data-waiting-step')]),
      ),
    ).toEqual([
      [first.run.uid, 'review'],
      [second.run.uid, 'cleanup'],
    ]);
    const card = (uid: string) => page.locator(`[data-waiting-run="${uid}"]`);
    expect((await card(first.run.uid).locator('[data-prompt]').innerText()).trim()).toBe('Send the invoice to ACME?');
    expect(await page.getByText('Not yours').count()).toBe(0);
    await shot(page, 'settings-runs-approval-desktop');

    await card(first.run.uid).getByLabel('Comment (optional)').fill('ok <b>by</b> me');
    await card(first.run.uid).getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL('**/settings/runs');
    expect(await page.getByRole('status').innerText()).toContain('review approved');
    expect(await stepRow(first.run.uid, 'review')).toMatchObject({
      status: 'approved',
      decision: { approved: true, comment: 'ok <b>by</b> me', data: null },
    });
    expect(await waiting.evaluateAll((cards) => cards.map((c) => c.getAttribute('data-waiting-run')))).toEqual([
      second.run.uid,
    ]);

    await card(second.run.uid).getByRole('button', { name: 'Reject' }).click();
    // Already at /settings/runs: the page's message is the signal that the new one has loaded.
    await page.getByRole('status').filter({ hasText: 'cleanup rejected' }).waitFor();
    expect(await stepRow(second.run.uid, 'cleanup')).toMatchObject({
      status: 'rejected',
      decision: { approved: false, comment: null },
    });
    expect(await waiting.count()).toBe(0);
    const deadline = Date.now() + 5_000;
    while (woken.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(woken.sort()).toEqual([first.run.uid, second.run.uid].sort());
    stops.forEach((stop) => stop());

    // The same protections as every settings form: without the session's CSRF token nothing is decided,
    // and someone else's run is not decided through this page either.
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const post = (form: Record<string, string>) =>
      page.request.post(`${suite.t.url}/settings/runs/approvals`, { form, maxRedirects: 0 });
    expect((await post({ run_uid: someoneElse.run.uid, step_id: 'review', decision: 'approve' })).status()).toBe(403);
    expect(
      (await post({ _csrf: csrf, run_uid: someoneElse.run.uid, step_id: 'review', decision: 'approve' })).status(),
    ).toBe(303);
    expect((await stepRow(someoneElse.run.uid, 'review'))!.status).toBe('waiting');
    await page.goto(`${suite.t.url}/settings/runs`);
    expect(await page.getByRole('alert').innerText()).toContain('no such run of yours');
    await context.close();
  },
  60_000,
);

maybe(
  'the token list marks an expired token “expired”, apart from active ones; the create form’s number fields look like its text fields, in one grid',
  async () => {
    const user = await createUser({ username: 'expiring', password: PASSWORD });
    const { record: lapsed } = await createApiToken(user, 'lapsed', { expiresAt: new Date(Date.now() + 86_400_000) });
    await lapsed.update({ expires_at: new Date(Date.now() - 60_000) });
    const { record: current } = await createApiToken(user, 'current', {
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    const { record: forever } = await createApiToken(user, 'forever');
    const { record: revoked } = await createApiToken(user, 'gone');
    await revoked.update({ revoked_at: new Date() });

    const context = await suite.browser.newContext(DESKTOP);
    const page = await context.newPage();
    await signIn(page, 'expiring');
    const status = async (uid: string) =>
      (await page.locator(`tr[data-token-uid="${uid}"] [data-token-status]`).innerText()).trim();
    expect(await status(lapsed.uid)).toBe('expired');
    expect(await status(current.uid)).toBe('active');
    expect(await status(forever.uid)).toBe('active');
    // Revoked tokens are not listed at all: "expired" is never a revoked token.
    expect(await page.locator(`tr[data-token-uid="${revoked.uid}"]`).count()).toBe(0);

    // The number inputs wear the text inputs' style, and every field of the form sits in the one grid.
    const look = (selector: string) =>
      page.locator(selector).evaluate((el) => {
        const style = getComputedStyle(el);
        return {
          border: style.borderTopWidth + style.borderTopStyle,
          radius: style.borderTopLeftRadius,
          padding: style.paddingLeft,
          height: el.getBoundingClientRect().height,
        };
      });
    const text = await look('#label');
    expect(await look('#expires_in_days')).toEqual(text);
    expect(await look('#max_credits_per_day')).toEqual(text);
    const boxes = await page
      .locator('[data-token-form] > .field')
      .evaluateAll((els) =>
        els.map((el) => el.getBoundingClientRect()).map((r) => ({ top: r.top, left: r.left, right: r.right })),
      );
    const form = await page.locator('[data-token-form]').evaluate((el) => el.getBoundingClientRect());
    // Each row of fields runs from the form's left edge to its right one: no row leaves an empty cell.
    const rows = [...new Set(boxes.map((box) => Math.round(box.top)))];
    expect(rows.length).toBeGreaterThanOrEqual(2);
    for (const top of rows) {
      const row = boxes.filter((box) => Math.round(box.top) === top);
      expect({ top, left: Math.round(Math.min(...row.map((box) => box.left)) - form.left) }).toEqual({ top, left: 0 });
      expect({ top, right: Math.round(form.right - Math.max(...row.map((box) => box.right))) }).toEqual({
        top,
        right: 0,
      });
    }
    await context.close();
  },
  60_000,
);

maybe(
  'a run’s output is one click from the Runs page, as the API shows it, escaped; another user’s run is not found',
  async () => {
    const owner = await makeUser({ username: 'outputs', password: PASSWORD, credits: 10 });
    const circuit = await makeRunnableCircuit(
      owner,
      {
        query_schema: { type: 'object' },
        steps: [
          {
            id: 'render',
            kind: 'transform',
            expression:
              '{"html": "<img src=x onerror=\\"document.title=1\\">", "items": [1, 2, 3], "note": input.note}',
          },
        ],
      },
      { name: 'renderer' },
    );
    const done = await waitForRun(
      suite.t,
      (await submitRun(suite.t, owner.token, circuit.adaptorUid, { input: { note: '</pre><b>bold</b>' } })).body.payload
        .uid,
      owner.token,
    );
    expect(done.state).toBe('COMPLETED');
    const apiOutput = done.result_blob.output;
    expect(apiOutput).toEqual({
      html: '<img src=x onerror="document.title=1">',
      items: [1, 2, 3],
      note: '</pre><b>bold</b>',
    });

    const context = await suite.browser.newContext(DESKTOP);
    const page = await context.newPage();
    await signIn(page, 'outputs');
    await page.goto(`${suite.t.url}/settings/runs`);
    await page.locator(`tr[data-run-uid="${done.uid}"] [data-run-link]`).click();
    await page.waitForURL(`**/settings/runs/${done.uid}`);
    const shown = page.locator('[data-run-output]');
    expect(JSON.parse(await shown.innerText())).toEqual(apiOutput);
    expect(await shown.locator('img, b').count()).toBe(0);
    expect(await page.title()).not.toBe('1');
    expect((await page.locator('[data-run-state]').innerText()).trim()).toBe('COMPLETED');
    // The base credit, charged at its end; it holds nothing any more.
    expect((await page.locator('[data-run-credits]').innerText()).trim()).toBe('1');
    await shot(page, 'settings-run-output-desktop');

    // Not the user's run (public or not), or no run at all: 404, nothing of it shown.
    const stranger = await makeUser({ credits: 5 });
    const theirs = await makeRunnableCircuit(stranger, HELLO_DEFINITION, { name: 'theirs' });
    const other = await waitForRun(
      suite.t,
      (await submitRun(suite.t, stranger.token, theirs.adaptorUid, { input: { name: 'Secret' }, is_public: true })).body
        .payload.uid,
      stranger.token,
    );
    for (const uid of [other.uid, '00000000-0000-4000-8000-000000000000', 'nope']) {
      const res = await page.request.get(`${suite.t.url}/settings/runs/${uid}`);
      expect({ uid, status: res.status() }).toEqual({ uid, status: 404 });
      expect(await res.text()).not.toContain('SECRET');
    }
    await context.close();
  },
  60_000,
);
