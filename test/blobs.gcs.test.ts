import crypto from 'node:crypto';
import { startTestApp, TestApp, testConfig } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { sha256, tempDataDir } from './support/blob-factories';
import { createBlobStorage, LocalStorage } from '../src/storage';
import { GcsStorage } from '../src/storage/GcsStorage';
import { Blob } from '../src/models/blobs';

const { publicKey, privateKey } = crypto.generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
});
const CLIENT_EMAIL = 'signer@circuits-test.iam.gserviceaccount.com';
const BUCKET = 'circuits-test-bucket';

function gcsStorage(ttl = 300): GcsStorage {
  return new GcsStorage({
    bucket: BUCKET,
    maxBytes: 1024,
    urlTtlSeconds: ttl,
    storageOptions: {
      projectId: 'circuits-test',
      credentials: { client_email: CLIENT_EMAIL, private_key: privateKey },
    },
  });
}

/** RFC 3986 encoding, as GCS's canonical query string uses. */
const encode = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Rebuilds the v4 canonical request and string-to-sign from a signed URL (cloud.google.com/storage/docs/
 * authentication/signatures) and verifies X-Goog-Signature with the public key. No network involved.
 */
function verifyV4SignedUrl(signedUrl: string): { valid: boolean; params: URLSearchParams; url: URL } {
  const url = new URL(signedUrl);
  const params = url.searchParams;
  const signature = params.get('X-Goog-Signature') ?? '';
  const canonicalQuery = [...params.entries()]
    .filter(([key]) => key !== 'X-Goog-Signature')
    .map(([key, value]) => [encode(key), encode(value)])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
  const signedHeaders = params.get('X-Goog-SignedHeaders') ?? '';
  expect(signedHeaders).toBe('host');
  const canonicalRequest = [
    'GET',
    url.pathname,
    canonicalQuery,
    `host:${url.hostname}\n`,
    signedHeaders,
    'UNSIGNED-PAYLOAD',
  ].join('\n');
  const [, ...scope] = (params.get('X-Goog-Credential') ?? '').split('/');
  const stringToSign = [
    params.get('X-Goog-Algorithm'),
    params.get('X-Goog-Date'),
    scope.join('/'),
    crypto.createHash('sha256').update(canonicalRequest).digest('hex'),
  ].join('\n');
  const valid = crypto.verify('RSA-SHA256', Buffer.from(stringToSign), publicKey, Buffer.from(signature, 'hex'));
  return { valid, params, url };
}

describe('GcsStorage signed URLs', () => {
  test('signs a v4 read URL locally whose signature verifies against the canonical request', async () => {
    const uid = crypto.randomUUID();
    const before = Date.now();
    const signed = await gcsStorage(600).signedUrl(uid, { baseUrl: 'http://ignored.example' });
    const { valid, params, url } = verifyV4SignedUrl(signed);
    expect(valid).toBe(true);
    expect(url.origin).toBe('https://storage.googleapis.com');
    expect(url.pathname).toBe(`/${BUCKET}/${uid}`);
    expect(params.get('X-Goog-Algorithm')).toBe('GOOG4-RSA-SHA256');
    expect(params.get('X-Goog-Credential')).toMatch(new RegExp(`^${CLIENT_EMAIL}/\\d{8}/auto/storage/goog4_request$`));
    const expires = Number(params.get('X-Goog-Expires'));
    expect(expires).toBeGreaterThanOrEqual(599);
    expect(expires).toBeLessThanOrEqual(600);
    const date = params.get('X-Goog-Date')!;
    const signedAt = Date.parse(
      `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`,
    );
    expect(Math.abs(signedAt - before)).toBeLessThan(5_000);
  });

  test('a URL changed after signing no longer verifies', async () => {
    const uid = crypto.randomUUID();
    const signed = await gcsStorage().signedUrl(uid, { baseUrl: 'http://ignored.example' });
    const longer = new URL(signed);
    longer.searchParams.set('X-Goog-Expires', '604800');
    expect(verifyV4SignedUrl(longer.toString()).valid).toBe(false);
    const other = new URL(signed);
    other.pathname = `/${BUCKET}/${crypto.randomUUID()}`;
    expect(verifyV4SignedUrl(other.toString()).valid).toBe(false);
    const { publicKey: otherKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
    const { params } = verifyV4SignedUrl(signed);
    expect(
      crypto.verify('RSA-SHA256', Buffer.from('x'), otherKey, Buffer.from(params.get('X-Goog-Signature')!, 'hex')),
    ).toBe(false);
  });

  test('createBlobStorage picks GCS when GCS_BUCKET is set, the data dir otherwise', () => {
    const data = tempDataDir();
    try {
      const gcs = createBlobStorage(testConfig({ gcsBucket: 'prod-bucket', dataDir: data.dir }));
      expect(gcs).toBeInstanceOf(GcsStorage);
      expect([gcs.type, gcs.bucket]).toEqual(['gcs', 'prod-bucket']);
      const local = createBlobStorage(testConfig({ dataDir: data.dir, blobMaxBytes: 10, blobUrlTtlSeconds: 42 }));
      expect(local).toBeInstanceOf(LocalStorage);
      expect([local.type, local.bucket, local.maxBytes, local.urlTtlSeconds]).toEqual([
        'local',
        'circuit-blobs',
        10,
        42,
      ]);
      expect((local as LocalStorage).dir).toBe(`${data.dir}/blobs`);
    } finally {
      data.remove();
    }
  });
});

describe('REST with GCS storage', () => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let data: ReturnType<typeof tempDataDir>;
  beforeAll(async () => {
    data = tempDataDir();
    t = await startTestApp({ dataDir: data.dir });
    // The service as configured with GCS_BUCKET and explicit credentials; nothing here calls Google.
    t.app.services.blobStorage = gcsStorage(120);
    owner = await makeUser();
    admin = await makeUser({ isAdmin: true });
  });
  afterAll(async () => {
    await t.close();
    data.remove();
  });

  async function gcsBlob(): Promise<Blob> {
    return Blob.create({
      user_uid: owner.user.uid,
      filename: 'notes.txt',
      hash: sha256('notes'),
      bytes: 5,
      mime_type: 'text/plain',
      blob_type: 'gcs',
      bucket: BUCKET,
    });
  }

  test('admins see blob_type gcs and a gs:// path', async () => {
    const blob = await gcsBlob();
    const res = await t.rest('GET', `/blobs/${blob.uid}`, { token: admin.token });
    expect(res.body.payload).toMatchObject({
      blob_type: 'gcs',
      path: `gs://${BUCKET}/${blob.uid}`,
      bytes: 5,
      mime_type: 'text/plain',
    });
    const anonymous = (await t.rest('GET', `/blobs/${blob.uid}`)).body.payload;
    expect(anonymous).not.toHaveProperty('blob_type');
    expect(anonymous).not.toHaveProperty('path');
  });

  test('download redirects to a verifiable v4 signed URL expiring after BLOB_URL_TTL_SECONDS', async () => {
    const blob = await gcsBlob();
    const res = await t.rest('GET', `/blobs/${blob.uid}/download`);
    expect(res.status).toBe(302);
    const { valid, params, url } = verifyV4SignedUrl(res.headers.get('location')!);
    expect(valid).toBe(true);
    expect(url.pathname).toBe(`/${BUCKET}/${blob.uid}`);
    expect(Number(params.get('X-Goog-Expires'))).toBeGreaterThanOrEqual(119);
    expect(Number(params.get('X-Goog-Expires'))).toBeLessThanOrEqual(120);
  });

  test('the local content route refuses to serve when storage is GCS', async () => {
    const blob = await gcsBlob();
    const res = await fetch(`${t.url}/blob-content/${blob.uid}?expires=9999999999&signature=00`);
    expect(res.status).toBe(404);
  });
});
