import { User } from '../src/models';
import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, startHttpTarget, submitRun, waitForRun } from './support/run-factories';

jest.setTimeout(30_000);

/** The run metrics on /metrics, scraped with a real GET. */
let t: TestApp;
let owner: TestUser;
let receiver: Awaited<ReturnType<typeof startHttpTarget>>;

beforeAll(async () => {
  t = await startTestApp({ webhookRetryBaseMs: 100 });
  owner = await makeUser({ credits: 100 });
  receiver = await startHttpTarget((req, res) => {
    res
      .writeHead(req.url === '/flaky' && receiver.requests.filter((r) => r.url === '/flaky').length === 1 ? 500 : 200)
      .end();
  });
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

async function scrape(): Promise<string> {
  const res = await fetch(`${t.url}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

/** A sample's value (0 when absent): `name{labels} value`. */
function sample(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line ? Number(line.split(' ').pop()) : 0;
}

async function scrapeUntil(check: (text: string) => boolean, timeoutMs = 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await scrape();
    if (check(text)) return text;
    if (Date.now() > deadline)
      throw new Error(
        `metrics never matched:\n${text
          .split('\n')
          .filter((l) => l.startsWith('circuit_'))
          .join('\n')}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('runs, run and step durations, credits, in-flight runs and webhook deliveries move on /metrics', async () => {
  const before = await scrape();
  for (const name of [
    'circuit_runs_total',
    'circuit_run_duration_seconds',
    'circuit_step_duration_seconds',
    'circuit_runs_in_flight',
    'circuit_webhook_deliveries_total',
    'circuit_credits_charged_total',
  ]) {
    expect(before).toContain(`# TYPE ${name} `);
  }
  const hello = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const failing = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'check', kind: 'transform', expression: '$error("no")' }],
  });

  const balanceBefore = Number((await User.findByPk(owner.user.uid))!.credits);
  const ok1 = await submitRun(t, owner.token, hello.adaptorUid, {
    input: { name: 'Ada' },
    webhook: `${receiver.url}/ok`,
  });
  const ok2 = await submitRun(t, owner.token, hello.adaptorUid, {
    input: { name: 'Bob' },
    webhook: `${receiver.url}/flaky`,
    webhook_events_filter: ['completed'],
  });
  const bad = await submitRun(t, owner.token, failing.adaptorUid, { input: {} });
  const runs = await Promise.all([ok1, ok2, bad].map((res) => waitForRun(t, res.body.payload.uid, owner.token)));
  expect(runs.map((r) => r.state)).toEqual(['COMPLETED', 'COMPLETED', 'EXCEPTION']);
  const charged = balanceBefore - Number((await User.findByPk(owner.user.uid))!.credits);
  expect(charged).toBeGreaterThanOrEqual(3);

  const moved =
    (name: string, labels = '') =>
    (text: string) =>
      sample(text, name, labels) - sample(before, name, labels);
  const after = await scrapeUntil(
    (text) =>
      moved('circuit_runs_total', 'state="COMPLETED"')(text) === 2 &&
      moved('circuit_runs_total', 'state="EXCEPTION"')(text) === 1 &&
      moved('circuit_webhook_deliveries_total', 'outcome="retry"')(text) >= 1 &&
      moved('circuit_webhook_deliveries_total', 'outcome="delivered"')(text) >= 2,
  );
  expect(moved('circuit_run_duration_seconds_count')(after)).toBe(3);
  expect(moved('circuit_run_duration_seconds_sum')(after)).toBeGreaterThan(0);
  // Two template and two transform steps completed, one transform step failed.
  expect(moved('circuit_step_duration_seconds_count', 'kind="template"')(after)).toBe(2);
  expect(moved('circuit_step_duration_seconds_count', 'kind="transform"')(after)).toBe(3);
  expect(moved('circuit_credits_charged_total')(after)).toBe(charged);
  expect(sample(after, 'circuit_runs_in_flight')).toBe(0);
});
