import { startTestApp, TestApp } from './support/app';
import { makeUser, makeCircuit } from './support/factories';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

test('a created circuit can be fetched by uid and by name through REST', async () => {
  const owner = await makeUser();
  const created = await t.rest('POST', '/circuits', {
    token: owner.token,
    body: { name: 'hello', description: 'greets' },
  });
  expect(created.status).toBe(200);
  expect(created.body.status).toBe('success');
  expect(created.body.payload).toMatchObject({
    name: 'hello',
    description: 'greets',
    username: owner.username,
    is_private: false,
  });

  const byUid = await t.rest('GET', `/circuits/${created.body.payload.uid}`);
  expect(byUid.status).toBe(200);
  const byName = await t.rest('GET', `/users/${owner.username}/circuits/hello`);
  expect(byName.body.payload.uid).toBe(created.body.payload.uid);

  const { circuit } = await makeCircuit(owner, { isPrivate: true });
  expect((await t.rest('GET', `/circuits/${circuit.uid}`)).status).toBe(401);
});
