import http from 'node:http';
import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { makeBlob, PNG_1PX, sha256, tempDataDir } from './support/blob-factories';
import { LocalStorage } from '../src/storage';
import type { Blob } from '../src/models/blobs';

let t: TestApp;
let data: ReturnType<typeof tempDataDir>;
let owner: TestUser;
let admin: TestUser;

beforeAll(async () => {
  data = tempDataDir();
  t = await startTestApp({ dataDir: data.dir });
  owner = await makeUser();
  admin = await makeUser({ isAdmin: true });
});
afterAll(async () => {
  await t.close();
  data.remove();
});

const storage = () => t.app.services.blobStorage;

describe('GET /blobs/:uid', () => {
  test('returns the blob fields of the API contract to anyone, without storage details, counting the read', async () => {
    const content = Buffer.from('{"hello": "world"}\n');
    const blob = await makeBlob(storage(), owner.user, { filename: 'greeting.json', data: content });

    const res = await t.rest('GET', `/blobs/${blob.uid}`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('success');
    expect(res.body.payload).toEqual({
      uid: blob.uid,
      hash: sha256(content),
      user_uid: owner.user.uid,
      created_at: blob.created_at.toISOString(),
      can_delete: false,
      bytes: content.length,
      total_reads: 1,
      mime_type: 'application/json',
    });
    expect((await t.rest('GET', `/blobs/${blob.uid}`, { token: owner.token })).body.payload.total_reads).toBe(2);
  });

  test('shows blob_type and path to admin tokens only', async () => {
    const blob = await makeBlob(storage(), owner.user);
    const asAdmin = await t.rest('GET', `/blobs/${blob.uid}`, { token: admin.token });
    expect(asAdmin.body.payload).toMatchObject({ blob_type: 'local', path: `local://circuit-blobs/${blob.uid}` });
    const asOwner = await t.rest('GET', `/blobs/${blob.uid}`, { token: owner.token });
    expect(asOwner.body.payload).not.toHaveProperty('blob_type');
    expect(asOwner.body.payload).not.toHaveProperty('path');

    const query = 'query($uid: ID!) { blob(uid: $uid) { uid blobType path canDelete totalReads } }';
    const gqlAdmin = await t.gql(query, { uid: blob.uid }, admin.token);
    expect(gqlAdmin.data.blob).toMatchObject({
      blobType: 'local',
      path: `local://circuit-blobs/${blob.uid}`,
      canDelete: false,
      totalReads: 3,
    });
    const gqlAnon = await t.gql(query, { uid: blob.uid });
    expect(gqlAnon.data.blob).toMatchObject({ blobType: null, path: null });
  });

  test('sniffs the MIME type from the content first, then the file name, else null', async () => {
    const png = await makeBlob(storage(), owner.user, { filename: 'picture.txt', data: PNG_1PX });
    const csv = await makeBlob(storage(), owner.user, { filename: 'table.csv', data: 'a,b\n1,2\n' });
    const unknown = await makeBlob(storage(), owner.user, { filename: 'README', data: 'plain words' });
    const mimeOf = async (blob: Blob) => (await t.rest('GET', `/blobs/${blob.uid}`)).body.payload.mime_type;
    expect(await mimeOf(png)).toBe('image/png');
    expect(await mimeOf(csv)).toBe('text/csv');
    expect(await mimeOf(unknown)).toBeNull();
  });

  test('50 concurrent reads count 50, and each response includes its own read', async () => {
    const blob = await makeBlob(storage(), owner.user);
    const responses = await Promise.all(Array.from({ length: 50 }, () => t.rest('GET', `/blobs/${blob.uid}`)));
    expect(responses.every((r) => r.status === 200)).toBe(true);
    const counts = responses.map((r) => r.body.payload.total_reads as number).sort((a, b) => a - b);
    expect(counts).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect((await t.rest('GET', `/blobs/${blob.uid}`)).body.payload.total_reads).toBe(51);
  });

  test.each([
    ['an unknown uid', '1b4e28ba-2fa1-41d2-883f-0016d3cca427'],
    ['a malformed uid', 'not-a-uid'],
    ['a uid with SQL in it', "x' OR '1'='1"],
  ])('is 404 NotFound for %s, for metadata and download alike', async (_name, uid) => {
    for (const path of [`/blobs/${encodeURIComponent(uid)}`, `/blobs/${encodeURIComponent(uid)}/download`]) {
      const res = await t.rest('GET', path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: 'NotFound', message: 'Blob not found' } });
    }
  });

  test('an invalid bearer token is 401 even though no token is needed', async () => {
    const blob = await makeBlob(storage(), owner.user);
    const res = await t.rest('GET', `/blobs/${blob.uid}`, { token: 'cst_nope' });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('Unauthorized');
  });
});

describe('GET /blobs/:uid/download (local storage)', () => {
  test('redirects to a signed URL on this service that serves the exact bytes', async () => {
    const blob = await makeBlob(storage(), owner.user, { filename: 'pixel.png', data: PNG_1PX });
    const res = await t.rest('GET', `/blobs/${blob.uid}/download`);
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    expect(location.startsWith(`${t.url}/blob-content/${blob.uid}?`)).toBe(true);
    const url = new URL(location);
    expect(Number(url.searchParams.get('expires'))).toBeGreaterThan(Date.now() / 1000);
    expect(url.searchParams.get('signature')).toMatch(/^[0-9a-f]{64}$/);

    const content = await fetch(location);
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toBe('image/png');
    expect(content.headers.get('content-length')).toBe(String(PNG_1PX.length));
    expect(content.headers.get('x-content-type-options')).toBe('nosniff');
    expect(content.headers.get('content-disposition')).toContain('attachment; filename="pixel.png"');
    expect(Buffer.from(await content.arrayBuffer()).equals(PNG_1PX)).toBe(true);

    // Downloading is not a metadata read.
    expect((await t.rest('GET', `/blobs/${blob.uid}`)).body.payload.total_reads).toBe(1);
  });

  test('follows the redirect to the same bytes for a larger binary file', async () => {
    const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 31) % 256));
    const blob = await makeBlob(storage(), owner.user, { filename: 'data.bin', data: bytes });
    const res = await fetch(`${t.url}/api/v1/blobs/${blob.uid}/download`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
  });

  test('builds the URL from PUBLIC_URL (default: the listen address), never from a forged Host header', async () => {
    const blob = await makeBlob(storage(), owner.user);
    const port = new URL(t.url).port;
    const location = await new Promise<string | undefined>((resolve, reject) => {
      http
        .get(
          `${t.url}/api/v1/blobs/${blob.uid}/download`,
          { headers: { host: `files.example.test:${port}` } },
          (res) => {
            res.resume();
            resolve(res.headers.location);
          },
        )
        .on('error', reject);
    });
    expect(location?.startsWith(`${t.url}/blob-content/${blob.uid}?`)).toBe(true);
  });

  test('a tampered, truncated or expired link is 403 with the error envelope', async () => {
    const blob = await makeBlob(storage(), owner.user, { data: 'secret content' });
    const good = new URL((await t.rest('GET', `/blobs/${blob.uid}/download`)).headers.get('location')!);
    const other = await makeBlob(storage(), owner.user);

    const variants: [string, (u: URL) => void][] = [
      ['signature changed', (u) => u.searchParams.set('signature', flip(u.searchParams.get('signature')!))],
      ['expiry extended', (u) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600))],
      ['signature missing', (u) => u.searchParams.delete('signature')],
      ['expiry missing', (u) => u.searchParams.delete('expires')],
      [
        'other blob',
        (u) => {
          u.pathname = `/blob-content/${other.uid}`;
        },
      ],
    ];
    for (const [name, tamper] of variants) {
      const url = new URL(good);
      tamper(url);
      const res = await fetch(url);
      expect([name, res.status]).toEqual([name, 403]);
      expect(await res.json()).toEqual({ error: { code: 'NotAllowed', message: 'The download link is invalid' } });
    }

    const expired = await (storage() as LocalStorage).signedUrl(blob.uid, { baseUrl: t.url, ttlSeconds: -1 });
    const res = await fetch(expired);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: { code: 'NotAllowed', message: 'The download link has expired' } });

    expect((await fetch(good)).status).toBe(200);
  });

  test('a malformed uid on the content route is 404', async () => {
    const res = await fetch(`${t.url}/blob-content/not-a-uid?expires=9999999999&signature=${'0'.repeat(64)}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'NotFound', message: 'Blob not found' } });
  });

  test('HEAD on a signed link gives the headers without the body', async () => {
    const blob = await makeBlob(storage(), owner.user, { filename: 'a.txt', data: 'twelve bytes' });
    const url = await storage().signedUrl(blob.uid, { baseUrl: t.url });
    const res = await fetch(url, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('12');
    expect(res.headers.get('content-type')).toBe('text/plain');
  });

  test('a validly signed link for a uid with no blob is 404', async () => {
    const uid = '0f0f0f0f-0000-4000-8000-000000000000';
    const url = await storage().signedUrl(uid, { baseUrl: t.url });
    const res = await fetch(url);
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe('NotFound');
  });
});

function flip(hex: string): string {
  return (hex[0] === '0' ? '1' : '0') + hex.slice(1);
}
