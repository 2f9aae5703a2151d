import { useTestApp } from './support/app';
import { makeUser, TestUser, HELLO_DEFINITION } from './support/factories';
import { makeRunnableCircuit, waitForRun } from './support/run-factories';

/**
 * The batch policy as a table, through REST: a batch is its submitter's — neither the
 * circuit's owner nor an admin may read, list or cancel someone else's. Submitting one follows the run
 * policy (who may start a run of the circuit). A batch's runs show tags, metadata and batch_uid to
 * their owner only, like every owner-only run field.
 */
type Role = 'anonymous' | 'other' | 'submitter' | 'circuitOwner' | 'admin';
type Action = 'get' | 'runs' | 'cancel';

const TABLE: Record<Role, Record<Action, number>> = {
  anonymous: { get: 401, runs: 401, cancel: 401 },
  other: { get: 403, runs: 403, cancel: 403 },
  submitter: { get: 200, runs: 200, cancel: 200 },
  circuitOwner: { get: 403, runs: 403, cancel: 403 },
  admin: { get: 403, runs: 403, cancel: 403 },
};

const t = useTestApp();
let users: Record<Exclude<Role, 'anonymous'>, TestUser>;
let batchUid: string;
let publicAdaptor: string;
let privateAdaptor: string;
let runUid: string;

beforeAll(async () => {
  const [other, submitter, circuitOwner, admin] = await Promise.all([
    makeUser(),
    makeUser(),
    makeUser(),
    makeUser({ isAdmin: true }),
  ]);
  users = { other, submitter, circuitOwner, admin };
  publicAdaptor = (await makeRunnableCircuit(circuitOwner, HELLO_DEFINITION)).adaptorUid;
  privateAdaptor = (await makeRunnableCircuit(circuitOwner, HELLO_DEFINITION, { isPrivate: true })).adaptorUid;
  const created = await t.rest('POST', `/circuit-adaptors/${publicAdaptor}/batches`, {
    token: submitter.token,
    body: { inputs: [{ name: 'a' }], tags: ['mine'], metadata: { k: 'v' } },
  });
  expect(created.status).toBe(200);
  batchUid = created.body.payload.uid;
  const runs = await t.rest('GET', `/batches/${batchUid}/runs`, { token: submitter.token });
  runUid = runs.body.data[0].uid;
  await waitForRun(t, runUid, submitter.token);
});

const cells = Object.entries(TABLE).flatMap(([role, row]) =>
  Object.entries(row).map(([action, status]) => [role, action, status] as [Role, Action, number]),
);

test.each(cells)('%s → %s a batch: %i', async (role, action, status) => {
  const token = role === 'anonymous' ? undefined : users[role].token;
  const res =
    action === 'get'
      ? await t.rest('GET', `/batches/${batchUid}`, { token })
      : action === 'runs'
        ? await t.rest('GET', `/batches/${batchUid}/runs`, { token })
        : await t.rest('POST', `/batches/${batchUid}/cancel`, { token });
  expect(res.status).toBe(status);
  if (status >= 400) expect(res.body.error.code).toBe({ 401: 'Unauthorized', 403: 'NotAllowed' }[status]);
});

test.each([
  ['anonymous', 'public', 401],
  ['other', 'public', 200],
  ['other', 'private', 403],
  ['circuitOwner', 'private', 200],
  ['admin', 'private', 403],
] as const)('%s submits a batch of a %s circuit: %i, as a query answers', async (role, visibility, status) => {
  const token = role === 'anonymous' ? undefined : users[role].token;
  const adaptor = visibility === 'public' ? publicAdaptor : privateAdaptor;
  const res = await t.rest('POST', `/circuit-adaptors/${adaptor}/batches`, {
    token,
    body: { inputs: [{ name: 'x' }] },
  });
  expect(res.status).toBe(status);
  const query = await t.rest('POST', `/circuit-adaptors/${adaptor}/query`, { token, body: { input: { name: 'x' } } });
  expect(query.status).toBe(status);
});

test("a batch's run shows its owner tags, metadata and batch_uid", async () => {
  const mine = await t.rest('GET', `/circuit-runs/${runUid}`, { token: users.submitter.token });
  expect(mine.body.payload).toMatchObject({ batch_uid: batchUid, tags: ['mine'], metadata: { k: 'v' } });
});
