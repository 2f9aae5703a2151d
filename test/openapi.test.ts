import { startTestApp, TestApp } from './support/app';
import { validateOpenApiDocument } from './support/openapi';
import { routes } from '../rest-bridge/routes';
import { openApiPath, pathParams } from '../rest-bridge/openapi';

let t: TestApp;
let doc: any;
beforeAll(async () => {
  t = await startTestApp();
  const res = await t.rest('GET', '/openapi.json');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  doc = res.body;
});
afterAll(async () => {
  await t?.close();
});

test('GET /api/v1/openapi.json is a valid OpenAPI 3.1 document', async () => {
  expect(doc.openapi).toMatch(/^3\.1\./);
  const result = await validateOpenApiDocument(doc);
  expect(result.errors).toBeUndefined();
  expect(result).toMatchObject({ valid: true, version: '3.1' });
});

test('every route of the table appears with its method, path parameters, tag and security', () => {
  expect(routes.length).toBeGreaterThan(0);
  const operationIds = new Set<string>();
  for (const route of routes) {
    const operation = doc.paths[openApiPath(route.path)]?.[route.method.toLowerCase()];
    expect({ route: `${route.method} ${route.path}`, found: Boolean(operation) }).toEqual({
      route: `${route.method} ${route.path}`,
      found: true,
    });
    expect(operation.summary).toBe(route.summary);
    expect(operation.tags).toEqual([route.tag]);
    expect(operationIds.has(operation.operationId)).toBe(false);
    operationIds.add(operation.operationId);
    const pathNames = (operation.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
    expect(pathNames).toEqual(pathParams(route.path));
    for (const [name, spec] of Object.entries(route.query ?? {})) {
      const parameter = operation.parameters.find((p: any) => p.in === 'query' && p.name === name);
      expect(parameter).toMatchObject({ required: spec.required ?? false, schema: spec.schema });
    }
    const expectedSecurity =
      route.auth === 'required' ? [{ bearerAuth: [] }] : route.auth === 'optional' ? [{}, { bearerAuth: [] }] : [];
    expect(operation.security).toEqual(expectedSecurity);
    const shape = route.shape ?? 'object';
    if (shape === 'redirect') expect(Object.keys(operation.responses)).toContain('302');
    else expect(Object.keys(operation.responses)).toContain('200');
    const notFound = operation.responses['404'];
    if (notFound.$ref) expect(notFound).toEqual({ $ref: '#/components/responses/NotFound' });
    else expect(notFound.description).toMatch(/^NotFound: /);
    if (route.body) {
      const schema = operation.requestBody.content['application/json'].schema;
      expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(route.body.properties).sort());
      expect(schema.additionalProperties).toBe(false);
    }
  }
});

test('response payloads are typed from the GraphQL operation the route runs', () => {
  const create = doc.paths['/circuits'].post;
  expect(create.requestBody.content['application/json'].schema.required).toEqual(['name']);
  const envelope = create.responses['200'].content['application/json'].schema;
  expect(envelope.required).toEqual(['status', 'payload']);
  const payload = envelope.properties.payload;
  expect(payload.type).toBe('object');
  for (const field of [
    'uid',
    'name',
    'username',
    'is_private',
    'is_protected',
    'adaptor_uid',
    'primary_version_uid',
    'created_at',
  ]) {
    expect(payload.properties).toHaveProperty(field);
  }
  expect(payload.properties.is_private).toEqual({ type: 'boolean' });
  expect(payload.properties.created_at).toMatchObject({ format: 'date-time' });
  expect(create.responses['401']).toEqual({ $ref: '#/components/responses/Unauthorized' });

  const error = doc.components.schemas.Error;
  expect(error.properties.error.required).toEqual(['message', 'code']);
  expect(doc.components.responses.NotFound.content['application/json'].schema).toEqual({
    $ref: '#/components/schemas/Error',
  });

  const page = routes.find((r) => r.shape === 'page');
  if (page) {
    const schema =
      doc.paths[openApiPath(page.path)][page.method.toLowerCase()].responses['200'].content['application/json'].schema;
    expect(schema.required).toEqual(['meta', 'data']);
    expect(schema.properties.meta).toEqual({ $ref: '#/components/schemas/PageMeta' });
    expect(schema.properties.data.type).toBe('array');
  }
});

test('the run event stream is documented beside the table', () => {
  const events = doc.paths['/circuit-runs/{uid}/events'].get;
  expect(Object.keys(events.responses['200'].content)).toEqual(['text/event-stream']);
});
