import { HELLO_DEFINITION, makeUser, TestUser } from './support/factories';
import { useTestApp } from './support/app';
import { ContractChecker } from './support/openapi';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';

const t = useTestApp();
let owner: TestUser;
let other: TestUser;
let checker: ContractChecker;
beforeAll(async () => {
  checker = new ContractChecker(await (await fetch(`${t.url}/api/v1/openapi.json`)).json());
  [owner, other] = await Promise.all([makeUser(), makeUser()]);
});

/** GET /circuit-runs/{uid}, checked against the OpenAPI document like the contract test does. */
async function getRun(uid: string, token: string | undefined, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.url}/api/v1/circuit-runs/${uid}`, {
    headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });
  const text = await res.text();
  checker.check({ method: 'GET', template: '/circuit-runs/{uid}', status: res.status, headers: res.headers, text });
  return { status: res.status, etag: res.headers.get('etag'), text, deprecation: res.headers.get('deprecation') };
}

test('a conditional GET of a run is 304 while the run is unchanged, 200 once it changed, and never skips authorization', async () => {
  const { circuit, adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const submitted = await submitRun(t, owner.token, adaptorUid, { input: { name: 'Ada' } });
  const uid = submitted.body.payload.uid as string;
  await waitForRun(t, uid, owner.token);

  const first = await getRun(uid, owner.token);
  expect(first.status).toBe(200);
  expect(first.etag).toMatch(/^W\/".+"$/);
  const again = await getRun(uid, owner.token, { 'if-none-match': first.etag! });
  expect({ status: again.status, text: again.text, etag: again.etag }).toEqual({
    status: 304,
    text: '',
    etag: first.etag,
  });

  // Someone else holding the ETag still gets the 401/403 the run's policy answers, not a 304.
  expect((await getRun(uid, other.token, { 'if-none-match': first.etag! })).status).toBe(403);
  expect((await getRun(uid, undefined, { 'if-none-match': first.etag! })).status).toBe(401);

  // The circuit deprecated: the answer carries a notice now, so a new body and a new ETag.
  expect((await t.rest('PUT', `/circuits/${circuit.uid}/deprecate`, { token: owner.token })).status).toBe(200);
  const changed = await getRun(uid, owner.token, { 'if-none-match': first.etag! });
  expect(changed.status).toBe(200);
  expect(changed.etag).not.toBe(first.etag);
  expect(JSON.parse(changed.text).notices).toEqual([expect.objectContaining({ code: 'deprecated' })]);
  const still = await getRun(uid, owner.token, { 'if-none-match': `"x", ${changed.etag}` });
  expect({ status: still.status, text: still.text, deprecation: still.deprecation }).toEqual({
    status: 304,
    text: '',
    deprecation: changed.deprecation,
  });

  expect(checker.violations).toEqual([]);
});
