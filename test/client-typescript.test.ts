import fs from 'node:fs';
import path from 'node:path';
import { createClient } from '../clients/typescript';
import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { openApiTypes } from './support/openapi-types';

/** The typed client of the whole REST API (clients/typescript/), generated from the served document. */
let t: TestApp;
let owner: TestUser;
beforeAll(async () => {
  t = await startTestApp();
  owner = await makeUser();
});
afterAll(async () => {
  await t?.close();
});

test('the committed clients/typescript/schema.d.ts is what the served document generates (run `npm run client:generate` when this fails)', async () => {
  const served = (await t.rest('GET', '/openapi.json')).body;
  const committed = fs.readFileSync(path.join(__dirname, '..', 'clients', 'typescript', 'schema.d.ts'), 'utf8');
  expect((await openApiTypes(served)) === committed).toBe(true);
});

test('the typed client creates a circuit, publishes a version, queries it and reads the run', async () => {
  const api = createClient({ baseUrl: `${t.url}/api/v1`, token: owner.token });
  const created = await api.POST('/circuits', { body: { name: `typed-${Date.now()}` } });
  expect(created.response.status).toBe(200);
  const circuit = created.data!.payload;

  const published = await api.POST('/circuits/{circuit_uid}/versions', {
    params: { path: { circuit_uid: circuit.uid } },
    body: {
      query_schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      steps: [{ id: 'greet', kind: 'template', template: 'Hello {{input.name}}' }],
      output: 'steps.greet.output',
    },
  });
  expect(published.response.status).toBe(200);
  expect(published.data!.payload.circuit_uid).toBe(circuit.uid);

  const queried = await api.POST('/circuit-adaptors/{adaptor_uid}/query', {
    params: { path: { adaptor_uid: circuit.adaptor_uid } },
    body: { input: { name: 'Ada' } },
    headers: { Prefer: 'wait=10' },
  });
  expect(queried.response.status).toBe(200);
  const uid = queried.data!.payload.uid;

  const read = async () => (await api.GET('/circuit-runs/{uid}', { params: { path: { uid } } })).data!.payload!;
  let run = await read();
  for (let i = 0; i < 200 && run.state !== 'COMPLETED' && run.state !== 'EXCEPTION'; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    run = await read();
  }
  expect(run.state).toBe('COMPLETED');
  // Typed: result_blob is {output, steps: {[id]: {kind, output, …}}}.
  const output: unknown = run.result_blob?.output;
  const kind: string | undefined = run.result_blob?.steps.greet?.kind;
  expect(output).toBe('Hello Ada');
  expect(kind).toBe('template');

  const missing = await api.GET('/circuit-runs/{uid}', {
    params: { path: { uid: '00000000-0000-4000-8000-000000000000' } },
  });
  expect(missing.response.status).toBe(404);
  expect(missing.error).toMatchObject({ error: { code: 'NotFound' } });
});
