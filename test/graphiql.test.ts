import { startTestApp, TestApp } from './support/app';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

test('a browser GET of /graphql gets GraphiQL whose scripts and styles are served locally (works offline)', async () => {
  const page = await fetch(`${t.url}/graphql`, { headers: { accept: 'text/html' } });
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain('GraphiQL');
  const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
  expect(assets.length).toBeGreaterThanOrEqual(4);
  for (const asset of assets) {
    expect(asset.startsWith('/')).toBe(true); // no CDN
    const res = await fetch(`${t.url}${asset}`);
    expect(res.status).toBe(200);
    // The icon is a few hundred bytes of SVG; the rest are the bundled scripts and styles.
    if (asset === '/favicon.ico') expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    else expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(1000);
  }
});

test('a JSON GET of /graphql still executes queries', async () => {
  const res = await fetch(`${t.url}/graphql?query=${encodeURIComponent('{ viewer { username } }')}`, {
    headers: { accept: 'application/json', 'apollo-require-preflight': 'true' },
  });
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ data: { viewer: null } });
});
