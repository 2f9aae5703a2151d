import { browserSuite } from './support/browser';
import { makeUser, type TestUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import { addWaitingStep, makeWaitingRun, stepRow } from './support/approval-factories';
import type { CircuitDefinition } from '../src/domain/definition';

/**
 * An approval's decision URL (docs/runs.md, Decision URLs): a person without an account reads the page (GET) and
 * decides (a JSON POST, or the page's form), with the URL's key as the only credential. Any other key, a key of
 * another step or run, or a key cut short answers exactly as an unknown run does.
 */

jest.setTimeout(60_000);

const suite = browserSuite('approvals.decision-link.test');
const { maybe } = suite;
let owner: TestUser;
beforeAll(async () => {
  owner = await makeUser({ credits: 1_000 });
});

const NO_SUCH_UID = '00000000-0000-4000-8000-000000000000';
let circuits = 0;

const gate = (prompt = 'Ship {{input.what}}?'): CircuitDefinition => ({
  query_schema: { type: 'object', properties: { what: { type: 'string' } } },
  steps: [{ id: 'ask', kind: 'approval', prompt }],
  output: 'steps.ask.output',
});

/** A run of `definition` that reached its approval: its uid and decision URL (from waiting_for). */
async function waitingRun(definition: CircuitDefinition = gate()): Promise<{ uid: string; url: URL }> {
  const { adaptorUid } = await makeRunnableCircuit(owner, definition, { name: `release-train-${++circuits}` });
  const { body } = await submitRun(suite.t, owner.token, adaptorUid, { input: { what: 'v2' } });
  const uid = body.payload.uid as string;
  for (const deadline = Date.now() + 20_000; ;) {
    const { body: read } = await suite.t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token });
    const url = read.payload.waiting_for?.[0]?.decision_url as string | undefined;
    if (url) return { uid, url: new URL(url) };
    if (Date.now() > deadline) throw new Error(`run ${uid} is not waiting: ${JSON.stringify(read.payload)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const post = (path: string, body: unknown) => suite.t.http('POST', path, { body });
const postForm = (path: string, fields: Record<string, string>) =>
  suite.t.http('POST', path, {
    rawBody: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
const getPage = async (path: string) => {
  const res = await fetch(`${suite.t.url}${path}`, { redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
};

/** The decision path of a synthetic waiting run (made in SQL, no engine) for step `stepId`. */
const decisionPath = (runUid: string, stepId: string) =>
  new URL(suite.t.app.services.runs.waitUrl(runUid, stepId, 'approval')).pathname;

function expectNotFramed(headers: Headers) {
  expect(headers.get('x-frame-options')).toBe('DENY');
  expect(headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
}

test('JSON approve: 200 with the decision, the run completes with it as its output; the same again 200, a different one 409', async () => {
  const { uid, url } = await waitingRun();
  expect(url.pathname).toMatch(new RegExp(`^/decisions/${uid}/ask/[A-Za-z0-9_-]{43}$`));
  const res = await post(url.pathname, { approved: true, comment: 'ship it' });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({
    status: 'success',
    payload: { approved: true, comment: 'ship it', resolved_at: expect.any(String) },
  });
  const run = await waitForRun(suite.t, uid, owner.token);
  expect(run.state).toBe('COMPLETED');
  expect(run.result_blob.output).toEqual({
    approved: true,
    comment: 'ship it',
    data: null,
    resolved_at: res.body.payload.resolved_at,
  });

  const again = await post(url.pathname, { approved: true });
  expect(again.status).toBe(200);
  expect(again.body.payload).toEqual(res.body.payload);
  const other = await post(url.pathname, { approved: false, comment: 'changed my mind' });
  expect(other.status).toBe(409);
  expect(other.body).toEqual({ error: { code: 'Conflict', message: expect.stringContaining('already approved') } });
});

test('JSON reject: the run ends EXCEPTION Rejected with the comment; approving after is 409', async () => {
  const { uid, url } = await waitingRun();
  const res = await post(url.pathname, { approved: false, comment: 'not today' });
  expect(res.status).toBe(200);
  expect(res.body.payload).toMatchObject({ approved: false, comment: 'not today' });
  expect((await post(url.pathname, { approved: false })).status).toBe(200);
  expect((await post(url.pathname, { approved: true })).status).toBe(409);
  const run = await waitForRun(suite.t, uid, owner.token);
  expect(run.state).toBe('EXCEPTION');
  expect(run.error).toEqual({ code: 'Rejected', step_id: 'ask', message: expect.stringContaining('not today') });
});

test('a forged key, a key of another step or run, a truncated or missing key: 404, the same answer as an unknown run', async () => {
  const { run, stepId } = await makeWaitingRun(owner, { prompt: 'Deploy?' });
  await addWaitingStep(run.uid, 'second', 'Also this?');
  const { run: otherRun } = await makeWaitingRun(owner);
  const path = decisionPath(run.uid, stepId);
  const key = path.split('/').pop()!;
  const flipped = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
  const wrong = [
    `/decisions/${run.uid}/${stepId}/${flipped}`,
    `/decisions/${run.uid}/second/${key}`,
    `/decisions/${otherRun.uid}/${stepId}/${key}`,
    `/decisions/${run.uid}/${stepId}/${key.slice(0, 20)}`,
    `/decisions/${run.uid}/${stepId}/${key}x`,
    `/decisions/${run.uid}/nope/${key}`,
    `/decisions/not-a-uid/${stepId}/${key}`,
  ];
  const unknown = `/decisions/${NO_SUCH_UID}/${stepId}/${key}`;

  const unknownPost = await post(unknown, { approved: true });
  expect(unknownPost.status).toBe(404);
  expect(unknownPost.body).toEqual({ error: { code: 'NotFound', message: 'Decision not found' } });
  const unknownPage = await getPage(unknown);
  expect(unknownPage.status).toBe(404);
  expect(unknownPage.headers.get('content-type')).toMatch(/^text\/html/);
  expectNotFramed(unknownPage.headers);
  for (const target of wrong) {
    const res = await post(target, { approved: true });
    expect({ target, status: res.status, body: res.body }).toEqual({
      target,
      status: 404,
      body: unknownPost.body,
    });
    const page = await getPage(target);
    // The page differs only by its style nonce.
    const unnonced = (text: string) => text.replace(/nonce="[^"]+"/, '');
    expect({ target, status: page.status, text: unnonced(page.text) }).toEqual({
      target,
      status: 404,
      text: unnonced(unknownPage.text),
    });
    const form = await postForm(target, { approved: 'true' });
    expect(form.status).toBe(404);
  }
  expect(unknownPage.text).not.toContain('Deploy?');
  // Nothing was decided through any of them.
  expect((await stepRow(run.uid, stepId))!.status).toBe('waiting');
  expect((await stepRow(run.uid, 'second'))!.status).toBe('waiting');
  // The right key still works.
  expect((await post(path, { approved: true })).status).toBe(200);
});

test('bad bodies: 400 naming the field, 415 for a body that is neither JSON nor a form; the step keeps waiting', async () => {
  const { run, stepId } = await makeWaitingRun(owner);
  const path = decisionPath(run.uid, stepId);
  const cases: Array<[unknown, string | undefined]> = [
    [{}, 'approved'],
    [{ approved: 'yes' }, 'approved'],
    [{ approved: true, comment: 7 }, 'comment'],
    [{ approved: true, comment: 'x'.repeat(2001) }, 'comment'],
    [{ approved: true, data: { a: 1 } }, 'data'],
    [[true], undefined],
  ];
  for (const [body, field] of cases) {
    const res = await post(path, body);
    expect({ body, status: res.status, code: res.body.error?.code }).toEqual({
      body,
      status: 400,
      code: 'BadClientData',
    });
    if (field) expect(res.body.error.message).toContain(field);
  }
  const text = await suite.t.http('POST', path, { rawBody: 'approved', headers: { 'content-type': 'text/plain' } });
  expect(text.status).toBe(415);
  const badForm = await postForm(path, { approved: 'maybe' });
  expect(badForm.status).toBe(400);
  expect(badForm.body).toContain('Choose Approve or Reject.');
  expect((await stepRow(run.uid, stepId))!.status).toBe('waiting');
  // A comment of 2,000 characters (not UTF-16 units) is fine.
  const res = await post(path, { approved: true, comment: '😀'.repeat(2000) });
  expect(res.status).toBe(200);
});

test('GET shows the circuit, the prompt escaped, the expiry and the form, under the anti-framing headers; no script', async () => {
  const prompt = 'Ship <script>alert("x")</script> & <img src=x onerror=alert(1)>?\nSecond line';
  const { run, stepId } = await makeWaitingRun(owner, { prompt, circuitName: 'deploy-service' });
  const path = decisionPath(run.uid, stepId);
  const page = await getPage(path);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  expect(page.headers.get('cache-control')).toBe('no-store');
  expect(page.headers.get('referrer-policy')).toBe('no-referrer');
  expectNotFramed(page.headers);
  const csp = page.headers.get('content-security-policy')!;
  expect(csp).toContain("default-src 'none'");
  expect(csp).not.toContain('script-src');
  expect(page.text).not.toContain('<script');
  expect(page.text).not.toContain('<img');
  expect(page.text).toContain(
    'Ship &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt;?',
  );
  expect(page.text).toContain('<h1 data-circuit>deploy-service</h1>');
  expect(page.text).toMatch(/<time datetime="\d{4}-\d\d-\d\dT[^"]+Z">/);
  expect(page.text).toMatch(/<form method="post">/);
  expect(page.text).toContain('name="approved" value="true"');
  expect(page.text).toContain('name="approved" value="false"');
  expect(page.text).toContain('<textarea id="comment" name="comment"');
  // The style is allowed by the page's nonce.
  const nonce = /style-src 'nonce-([^']+)'/.exec(csp)![1];
  expect(page.text).toContain(`<style nonce="${nonce}">`);
});

test('the form: 303 back to the page, which shows the decision and comment; a different decision is the page at 409', async () => {
  const { run, stepId } = await makeWaitingRun(owner, { prompt: 'Merge?' });
  const path = decisionPath(run.uid, stepId);
  const res = await postForm(path, { approved: 'false', comment: '  needs <tests>  ' });
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toBe(path);
  expectNotFramed(res.headers);
  expect(await stepRow(run.uid, stepId)).toMatchObject({
    status: 'rejected',
    decision: { approved: false, comment: 'needs <tests>' },
  });
  const page = await getPage(path);
  expect(page.status).toBe(200);
  expect(page.text).toContain('data-decision="rejected"');
  expect(page.text).toContain('needs &lt;tests&gt;');
  expect(page.text).not.toContain('<form');

  const conflict = await postForm(path, { approved: 'true', comment: 'please' });
  expect(conflict.status).toBe(409);
  expectNotFramed(conflict.headers);
  expect(conflict.body).toContain('already rejected');
  expect(conflict.body).toContain('data-decision="rejected"');
  // The same decision again is no error: back to the page.
  expect((await postForm(path, { approved: 'false' })).status).toBe(303);
});

test('a run that ended without a decision, and a step past its expiry, show no form', async () => {
  const ended = await makeWaitingRun(owner);
  await ended.run.update({ state: 'EXCEPTION', ended_at: new Date() });
  const endedPage = await getPage(decisionPath(ended.run.uid, ended.stepId));
  expect(endedPage.status).toBe(200);
  expect(endedPage.text).toContain('The run has ended');
  expect(endedPage.text).not.toContain('<form');
  expect((await post(decisionPath(ended.run.uid, ended.stepId), { approved: true })).status).toBe(409);

  const expired = await makeWaitingRun(owner, { expiresInS: -1 });
  const expiredPage = await getPage(decisionPath(expired.run.uid, expired.stepId));
  expect(expiredPage.text).toContain('The time to decide ran out');
  expect(expiredPage.text).not.toContain('<form');
});

maybe(
  'in Chromium: open the decision URL, type a comment, click Approve; the run completes with that comment',
  async () => {
    const { uid, url } = await waitingRun(gate('Release {{input.what}} to everyone?'));
    const context = await suite.browser.newContext({ viewport: { width: 390, height: 844 } });
    try {
      const page = await context.newPage();
      const violations: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') violations.push(message.text());
      });
      await page.goto(url.href);
      expect(await page.locator('[data-circuit]').textContent()).toMatch(/^release-train-\d+$/);
      expect(await page.locator('[data-prompt]').textContent()).toBe('Release v2 to everyone?');
      await page.getByLabel('Comment').fill('Looks good — go ahead');
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.locator('[data-decision="approved"]').waitFor({ timeout: 10_000 });
      expect(page.url()).toBe(url.href);
      expect(await page.locator('[data-comment]').textContent()).toBe('Looks good — go ahead');
      // The inline style obeyed the page's CSP (nothing refused).
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
    const run = await waitForRun(suite.t, uid, owner.token);
    expect(run.state).toBe('COMPLETED');
    expect(run.result_blob.output).toMatchObject({ approved: true, comment: 'Looks good — go ahead' });
  },
);
