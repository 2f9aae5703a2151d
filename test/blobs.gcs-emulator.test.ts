import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GcsStorage } from '../src/storage/GcsStorage';

/** A loopback stand-in for the GCS JSON API: single-request uploads, media downloads, deletes. */
function fakeGcs() {
  const objects = new Map<string, Buffer>();
  const requests: string[] = [];
  let failUploads = false;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://x');
      requests.push(`${req.method} ${url.pathname}`);
      const body = Buffer.concat(chunks);
      const upload = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/.exec(url.pathname);
      const object = /^\/storage\/v1\/b\/([^/]+)\/o\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'POST' && upload) {
        if (failUploads)
          return res
            .writeHead(503, { 'content-type': 'application/json' })
            .end('{"error":{"code":503,"message":"unavailable"}}');
        const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(req.headers['content-type'] ?? '')!;
        const delimiter = `--${boundary[1] ?? boundary[2]}`;
        const parts = body.toString('latin1').split(delimiter).slice(1, -1);
        const [metaPart, mediaPart] = parts.map((p) => p.slice(p.indexOf('\r\n\r\n') + 4, -2));
        const meta = JSON.parse(metaPart) as { name: string; contentType?: string };
        const name = url.searchParams.get('name') ?? meta.name;
        if (url.searchParams.get('ifGenerationMatch') === '0' && objects.has(name)) return res.writeHead(412).end('{}');
        const content = Buffer.from(mediaPart, 'latin1');
        objects.set(name, content);
        const md5Hash = crypto.createHash('md5').update(content).digest('base64');
        return res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            kind: 'storage#object',
            name,
            bucket: upload[1],
            generation: '1',
            size: String(content.length),
            md5Hash,
            contentType: meta.contentType,
          }),
        );
      }
      if (object) {
        const name = decodeURIComponent(object[2]);
        const content = objects.get(name);
        if (!content)
          return res
            .writeHead(404, { 'content-type': 'application/json' })
            .end('{"error":{"code":404,"message":"No such object"}}');
        if (req.method === 'DELETE') {
          objects.delete(name);
          return res.writeHead(204).end();
        }
        if (req.method === 'GET' && url.searchParams.get('alt') === 'media') {
          const md5 = crypto.createHash('md5').update(content).digest('base64');
          return res
            .writeHead(200, { 'content-type': 'application/octet-stream', 'x-goog-hash': `md5=${md5}` })
            .end(content);
        }
      }
      res.writeHead(400).end('{}');
    });
  });
  return {
    objects,
    requests,
    failUploads: (fail: boolean) => {
      failUploads = fail;
    },
    start: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
      ),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const gcs = fakeGcs();
let storage: GcsStorage;

beforeAll(async () => {
  const apiEndpoint = await gcs.start();
  storage = new GcsStorage({
    bucket: 'emulated',
    maxBytes: 1 << 20,
    urlTtlSeconds: 60,
    storageOptions: { apiEndpoint, projectId: 'test', retryOptions: { autoRetry: false } },
  });
});
afterAll(() => gcs.stop());

test('GcsStorage stores with a single request, reads the exact bytes back, and deletes', async () => {
  const uid = crypto.randomUUID();
  const content = crypto.randomBytes(3000);
  await storage.put(uid, content, 'application/octet-stream');
  expect(gcs.requests).toContain('POST /upload/storage/v1/b/emulated/o');
  expect(gcs.objects.get(uid)!.equals(content)).toBe(true);
  expect((await storage.read(uid)).equals(content)).toBe(true);
  await storage.delete(uid);
  expect(gcs.objects.has(uid)).toBe(false);
  await expect(storage.delete(uid)).resolves.toBeUndefined();
});

test('a failed upload rejects and leaves no object', async () => {
  const uid = crypto.randomUUID();
  gcs.failUploads(true);
  try {
    await expect(storage.put(uid, Buffer.from('x'), null)).rejects.toThrow();
  } finally {
    gcs.failUploads(false);
  }
  expect(gcs.objects.has(uid)).toBe(false);
});
