import { startTestApp, TestApp } from './support/app';

/**
 * Issue #24 (anti-framing): the pages a browser shows — GraphiQL (which keeps a pasted Authorization
 * header), the landing page, the REST reference and /settings — refuse to be framed by another site.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

const PAGES: [string, string][] = [
  ['/', 'the landing page'],
  ['/graphql', 'GraphiQL'],
  ['/api/v1/docs', 'the REST reference'],
  ['/settings', '/settings (signed out: its redirect or sign-in page)'],
  ['/settings/sign-in', 'the sign-in page'],
];

test.each(PAGES)('GET %s (%s) is sent with X-Frame-Options DENY and frame-ancestors none', async (path) => {
  const res = await fetch(`${t.url}${path}`, { headers: { accept: 'text/html' }, redirect: 'manual' });
  expect(res.status).toBeLessThan(500);
  await res.arrayBuffer();
  expect(res.headers.get('x-frame-options')).toBe('DENY');
  expect(res.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
});

test('the GraphiQL page is what was framed-protected (not a JSON answer)', async () => {
  const res = await fetch(`${t.url}/graphql`, { headers: { accept: 'text/html' } });
  expect(res.status).toBe(200);
  expect(await res.text()).toContain('GraphiQL');
  expect(res.headers.get('x-frame-options')).toBe('DENY');
});

test('JSON API answers are unchanged (no page CSP on /api/v1 resources)', async () => {
  const res = await fetch(`${t.url}/api/v1/circuits`);
  await res.arrayBuffer();
  expect(res.headers.get('content-security-policy')).toBeNull();
});
