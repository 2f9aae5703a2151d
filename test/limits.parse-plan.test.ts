import { startTestApp, TestApp } from './support/app';
import { HELLO_DEFINITION, makeCircuit, makeUser, TestUser } from './support/factories';
import { spawnServiceProcess, ServiceProcess } from './support/run-factories';
import { paced, probeBeside } from './support/latency';
import { MAX_DOCUMENT_CHARS } from '../src/graphql/document-bounds';

jest.setTimeout(180_000);

/** The bound for /healthz while hostile documents and crons arrive. */
const HEALTHZ_MS = 50;
/**
 * The bound is the 50 ms of the service's own time, asserted beside an idle control process of the
 * same build in the same window and scaled by how much the machine made the victim wait for a core
 * (probeBeside, test/support/latency.ts): on a quiet machine it is 50 ms over the idle cost of /healthz;
 * under the parallel suite or `stress --cpu 2` the scheduling noise is in both processes and the attack's
 * cost only in the victim's. A baseline taken once before the tests (another moment, another load) failed
 * this test at 70 ms on noise alone.
 */
let control: ServiceProcess;

let t: TestApp;
let api: ServiceProcess;
let owner: TestUser;
let circuitUid: string;

beforeAll(async () => {
  t = await startTestApp({ runWorker: false });
  owner = await makeUser();
  circuitUid = (await makeCircuit(owner, {}, HELLO_DEFINITION)).circuit.uid;
  // The service under test in a process of its own, so /healthz measures its event loop, not the test's.
  [api, control] = await Promise.all([
    spawnServiceProcess('api', t.databaseUrl),
    spawnServiceProcess('api', t.databaseUrl),
  ]);
});
afterAll(async () => {
  await api?.kill();
  await control?.kill();
  await t.close();
});

/** Anonymous documents of ~24 KB, each shaped to make parsing or validation work hard. */
function hostileDocuments(): string[] {
  const size = 24 * 1024;
  const repeat = (unit: string, join = ' ') =>
    Array.from({ length: Math.ceil(size / (unit.length + 1)) }, () => unit)
      .join(join)
      .slice(0, size);
  return [
    `{ ${Array.from({ length: 2000 }, (_, i) => `a${i}: __typename`).join(' ')} }`.slice(0, size - 2) + ' }',
    `{ ${repeat('viewer { uid }')} }`,
    `query { ...F0 } ${Array.from({ length: 400 }, (_, i) => `fragment F${i} on Query { __typename ...F${i + 1} }`).join(' ')} fragment F400 on Query { __typename }`,
    `{ ${repeat('...F')} } fragment F on Query { __typename }`,
    `{ ${repeat('__typename @skip(if: false)')} }`,
    `{ search(search: "${'x'.repeat(size)}") { totalCount } }`,
  ];
}

test('anonymous 24 KB GraphQL documents are refused or answered quickly: /healthz stays under 50 ms, no 5xx', async () => {
  const docs = hostileDocuments();
  const healthz = await probeBeside({ url: api.url!, pid: api.proc.pid! }, control.url!);
  // 20 documents a second, each from a new anonymous client.
  const statuses = await paced(
    Array.from({ length: 60 }, (_, i) => docs[i % docs.length]),
    50,
    async (query) => {
      const res = await fetch(`${api.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
      const body = (await res.json()) as { errors?: { message: string }[] };
      return { status: res.status, message: body.errors?.[0]?.message ?? '' };
    },
  );
  const { victim: health, control: quiet, stretch, summary } = await healthz.stop();
  console.log(`/healthz: ${summary}`);

  expect(statuses.filter((s) => s.status >= 500)).toEqual([]);
  expect(health.statuses.every((s) => s === 200)).toBe(true);
  // Each shape meets the bound made for it, before the work it would cost.
  const messages = statuses.slice(0, docs.length).map((s) => s.message);
  expect(messages[0]).toMatch(/more than 2000 tokens/);
  expect(messages[1]).toMatch(/more than 2000 tokens|selects "viewer" more than 10 times/);
  expect(messages[2]).toMatch(/more than 2000 tokens|more than 50 fragment spreads/);
  expect(messages[3]).toMatch(/more than 2000 tokens|more than 50 fragment spreads/);
  expect(health.p95).toBeLessThan(HEALTHZ_MS * stretch + quiet.p95);
});

test('a document over the size bound is refused before it is read further; one of many tokens while it parses', async () => {
  const big = await fetch(`${api.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: `{ __typename } #${'x'.repeat(MAX_DOCUMENT_CHARS)}` }),
  });
  expect(big.status).toBe(400);
  expect(((await big.json()) as { errors: { message: string }[] }).errors[0].message).toMatch(
    /longer than 65536 characters/,
  );
  // The same bounds over graphql-sse's single-connection mode are out of reach here; its prepareOperation
  // parses through the same parseBounded.
  const ok = await fetch(`${api.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ __typename }' }),
  });
  expect(ok.status).toBe(200);
});

test('rare crons are refused with 400 within a bounded search: /healthz stays under 50 ms, no 5xx', async () => {
  const rare = ['0 0 0 * 2 1#5', '59 59 23 * 2 0#5', '0 0 29 2 *', '0 0 0 * 2 5#5'];
  const healthz = await probeBeside({ url: api.url!, pid: api.proc.pid! }, control.url!);
  // 10 creates a second.
  const answers = await paced(
    Array.from({ length: 24 }, (_, i) => rare[i % rare.length]),
    100,
    async (cron) => {
      const res = await fetch(`${api.url}/api/v1/circuits/${circuitUid}/schedules`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
        body: JSON.stringify({ cron, input: { name: 'Ada' } }),
      });
      return {
        cron,
        status: res.status,
        body: (await res.json()) as { error?: { message?: string }; message?: string },
      };
    },
  );
  const { victim: health, control: quiet, stretch, summary } = await healthz.stop();
  console.log(`/healthz: ${summary}`);
  for (const answer of answers) {
    expect({ cron: answer.cron, status: answer.status }).toEqual({ cron: answer.cron, status: 400 });
    expect(JSON.stringify(answer.body)).toMatch(/cron must fire within a year/);
  }
  expect(health.statuses.every((s) => s === 200)).toBe(true);
  expect(health.p95).toBeLessThan(HEALTHZ_MS * stretch + quiet.p95);
  // A yearly schedule is still accepted.
  const yearly = await fetch(`${api.url}/api/v1/circuits/${circuitUid}/schedules`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
    body: JSON.stringify({ cron: '0 0 1 1 *', input: { name: 'Ada' } }),
  });
  expect(yearly.status).toBe(200);
});
