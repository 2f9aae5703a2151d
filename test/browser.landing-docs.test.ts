import type { Page } from 'playwright-core';
import Ajv2020 from 'ajv/dist/2020';
import { browserSuite } from './support/browser';
import { HELLO_DEFINITION } from './support/factories';
import { definitionJsonSchema } from '../src/engine/definition-schema';

const suite = browserSuite('browser.landing-docs.test');
const { maybe } = suite;

/** Every request the page makes, and which of them failed or left the service. */
function watch(page: Page) {
  const requests: string[] = [];
  const problems: string[] = [];
  page.on('request', (request) => {
    requests.push(request.url());
    if (!request.url().startsWith(suite.t.url) && !request.url().startsWith('data:'))
      problems.push(`off-site request: ${request.url()}`);
  });
  page.on('requestfailed', (request) => problems.push(`failed: ${request.url()} ${request.failure()?.errorText}`));
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${response.status()}: ${response.url()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return { requests, problems };
}

maybe('GET / is a landing page whose links all answer', async () => {
  const page = await suite.browser.newPage();
  const seen = watch(page);
  await page.goto(`${suite.t.url}/`);
  await expect(page.title()).resolves.toBe('Circuit Service');
  const hrefs = await page
    .locator('dl a')
    .evaluateAll((links) => links.map((a) => (a as HTMLAnchorElement).getAttribute('href')));
  expect(hrefs).toEqual(
    expect.arrayContaining([
      '/graphql',
      '/api/v1/docs',
      '/api/v1/openapi.json',
      '/settings',
      '/healthz',
      '/readyz',
      '/metrics',
    ]),
  );
  await expect(page.locator('link[rel="icon"]').getAttribute('href')).resolves.toBe('/favicon.ico');
  for (const href of hrefs) {
    const res = await fetch(`${suite.t.url}${href}`, {
      headers: { accept: 'text/html,application/json' },
      redirect: 'manual',
    });
    expect({ href, ok: res.status < 400 }).toEqual({ href, ok: true });
  }
  expect(seen.problems).toEqual([]);
  await page.close();
});

maybe('the REST reference renders every operation from the local OpenAPI document, offline', async () => {
  const page = await suite.browser.newPage();
  const seen = watch(page);
  await page.goto(`${suite.t.url}/api/v1/docs`);
  await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
  const doc = (await (await fetch(`${suite.t.url}/api/v1/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  const operations = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
  await expect(page.locator('.opblock').count()).resolves.toBe(operations);
  await expect(
    page.locator('.opblock-summary-path').filter({ hasText: '/circuit-adaptors/{adaptor_uid}/query' }).count(),
  ).resolves.toBe(1);
  expect(seen.requests.some((url) => url.endsWith('/api/v1/openapi.json'))).toBe(true);
  expect(seen.problems).toEqual([]);
  await page.close();
});

test('GET / answers JSON links to a JSON client, and the docs assets are served locally', async () => {
  const self = suite.t;
  const res = await fetch(`${self.url}/`, { headers: { accept: 'application/json' } });
  expect(res.status).toBe(200);
  expect((await res.json()).links).toEqual(expect.arrayContaining([{ href: '/api/v1/docs', title: 'REST reference' }]));
  const bundle = await fetch(`${self.url}/api/v1/docs/assets/swagger-ui-bundle.js`);
  expect(bundle.status).toBe(200);
  expect(bundle.headers.get('content-type')).toMatch(/javascript/);
  expect((await fetch(`${self.url}/api/v1/docs/assets/..%2Fpackage.json`)).status).toBe(404);
});

test('GET /favicon.ico is a cacheable SVG icon, and every HTML page of the service links to it', async () => {
  const self = suite.t;
  const icon = await fetch(`${self.url}/favicon.ico`);
  expect(icon.status).toBe(200);
  expect(icon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
  expect(icon.headers.get('cache-control')).toBe('public, max-age=86400');
  expect(await icon.text()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  const etag = icon.headers.get('etag')!;
  expect(etag).toBeTruthy();
  // fetch adds `Cache-Control: no-cache` to a request with If-None-Match unless it has one: a browser revalidating sends max-age=0.
  const revalidated = await fetch(`${self.url}/favicon.ico`, {
    headers: { 'if-none-match': etag, 'cache-control': 'max-age=0' },
  });
  expect(revalidated.status).toBe(304);
  for (const page of ['/', '/graphql', '/settings/sign-in']) {
    const body = await (await fetch(`${self.url}${page}`, { headers: { accept: 'text/html' } })).text();
    expect({ page, icon: /<link rel="icon" href="\/favicon\.ico" type="image\/svg\+xml">/.test(body) }).toEqual({
      page,
      icon: true,
    });
  }
});

test('GET /api/v1/definition-schema.json publishes the definition format that publishing enforces', async () => {
  const self = suite.t;
  const res = await fetch(`${self.url}/api/v1/definition-schema.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/schema\+json/);
  const schema = await res.json();
  expect(schema).toEqual(JSON.parse(JSON.stringify(definitionJsonSchema())));
  const ajv = new Ajv2020({ strict: false });
  const validate = ajv.compile(schema);
  expect(validate(HELLO_DEFINITION)).toBe(true);
  expect(validate({ query_schema: { type: 'object' }, steps: [{ id: 'a', kind: 'template' }] })).toBe(false);
});
