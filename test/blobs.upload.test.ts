import fs from 'node:fs';
import path from 'node:path';
import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { failingStorage, PNG_1PX, sha256, tempDataDir } from './support/blob-factories';
import { uploadBlob } from '../src/commands/upload-blob';
import { Blob } from '../src/models/blobs';
import { User } from '../src/models';
import { AppError } from '../src/errors';
import { LocalStorage } from '../src/storage';
import { resolveSecret } from '../src/storage/secret';

let t: TestApp;
let data: ReturnType<typeof tempDataDir>;
let owner: TestUser;
const MAX = 1000;

beforeAll(async () => {
  data = tempDataDir();
  t = await startTestApp({ dataDir: data.dir, blobMaxBytes: MAX });
  owner = await makeUser();
});
afterAll(async () => {
  await t.close();
  data.remove();
});

const storage = () => t.app.services.blobStorage as LocalStorage;
const storedFiles = () => (fs.existsSync(storage().dir) ? fs.readdirSync(storage().dir) : []);
const rowsOf = async (user: { uid: string }) => Blob.count({ where: { user_uid: user.uid } });

test('stores the content, then the row, and returns the blob', async () => {
  const content = Buffer.from('hello blobs');
  const blob = await uploadBlob(storage(), owner.user, { filename: 'dir/../notes.txt', data: content });
  expect(blob.uid).toMatch(/^[0-9a-f-]{36}$/);
  expect(fs.readFileSync(path.join(storage().dir, blob.uid)).equals(content)).toBe(true);
  const row = await Blob.findByPk(blob.uid);
  expect(row).toMatchObject({
    user_uid: owner.user.uid,
    filename: 'notes.txt',
    hash: sha256(content),
    mime_type: 'text/plain',
    blob_type: 'local',
    bucket: 'circuit-blobs',
  });
  expect(row!.byteCount).toBe(content.length);
  expect(row!.readCount).toBe(0);
  expect(storedFiles().filter((f) => f.startsWith('.tmp'))).toEqual([]);
});

test('accepts exactly BLOB_MAX_BYTES and refuses one more with PayloadTooLarge, storing nothing', async () => {
  const user = await makeUser();
  const atLimit = await uploadBlob(storage(), user.user, { filename: 'max.bin', data: Buffer.alloc(MAX, 7) });
  expect(atLimit.byteCount).toBe(MAX);

  const before = storedFiles().length;
  const error = await uploadBlob(storage(), user.user, { filename: 'big.bin', data: Buffer.alloc(MAX + 1, 7) }).catch(
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe('PayloadTooLarge');
  expect((error as AppError).message).toBe(`The file is larger than the limit of ${MAX} bytes`);
  expect(storedFiles().length).toBe(before);
  expect(await rowsOf(user.user)).toBe(1);
});

test('refuses an empty file as BadClientData', async () => {
  const error = await uploadBlob(storage(), owner.user, { filename: 'empty.txt', data: Buffer.alloc(0) }).catch(
    (e: unknown) => e,
  );
  expect((error as AppError).code).toBe('BadClientData');
});

test('a failure storing the content leaves no row', async () => {
  const user = await makeUser();
  const broken = failingStorage(storage(), { put: new Error('disk full') });
  await expect(uploadBlob(broken, user.user, { filename: 'a.txt', data: Buffer.from('abc') })).rejects.toThrow(
    'disk full',
  );
  expect(await rowsOf(user.user)).toBe(0);
});

test('a failure inserting the row deletes the stored content again', async () => {
  const before = new Set(storedFiles());
  // A user that is not in the database: the insert fails on the foreign key, after the content is stored.
  const ghost = User.build({ uid: '7d3c2f2e-4d5b-4f41-9c7e-1a2b3c4d5e6f', username: 'ghost' });
  await expect(uploadBlob(storage(), ghost, { filename: 'a.txt', data: Buffer.from('orphan?') })).rejects.toThrow();
  expect(storedFiles().filter((f) => !before.has(f))).toEqual([]);
  expect(await Blob.count({ where: { user_uid: ghost.uid } })).toBe(0);
});

test('local content is written whole: a failed write leaves neither the file nor a temp file', async () => {
  const dir = path.join(data.dir, 'readonly-store');
  fs.mkdirSync(dir, { mode: 0o500 });
  const store = new LocalStorage({ dir, secret: 's', maxBytes: 10, urlTtlSeconds: 60 });
  const uid = '2f1e0d9c-8b7a-4654-8321-0fedcba98765';
  if (process.getuid?.() === 0) {
    // root ignores directory permissions; make the rename fail instead by taking the target name.
    fs.mkdirSync(path.join(dir, uid));
    await expect(store.put(uid, Buffer.from('x'))).rejects.toThrow();
    expect(fs.readdirSync(dir)).toEqual([uid]);
  } else {
    await expect(store.put(uid, Buffer.from('x'))).rejects.toThrow();
    expect(fs.readdirSync(dir)).toEqual([]);
  }
  expect(() => store.filePath('../../etc/passwd')).toThrow('not a blob uid');
});

test('uploads via the CLI signature record PNGs by content and keep the exact bytes', async () => {
  const blob = await uploadBlob(storage(), owner.user, { filename: 'image', data: PNG_1PX });
  expect(blob.mime_type).toBe('image/png');
  expect((await storage().read(blob.uid)).equals(PNG_1PX)).toBe(true);
});

test('without SECRET_KEY a secret is generated once into DATA_DIR/secret with mode 0600', () => {
  const dir = tempDataDir();
  try {
    const first = resolveSecret({ secret: undefined, dataDir: dir.dir });
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    const file = path.join(dir.dir, 'secret');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file, 'utf8').trim()).toBe(first);
    expect(resolveSecret({ secret: undefined, dataDir: dir.dir })).toBe(first);
    expect(resolveSecret({ secret: 'from-env', dataDir: dir.dir })).toBe('from-env');
  } finally {
    dir.remove();
  }
});

test('no REST endpoint uploads, lists or deletes blobs', async () => {
  expect((await t.rest('POST', '/blobs', { token: owner.token, body: {} })).status).toBe(404);
  expect((await t.rest('GET', '/blobs', { token: owner.token })).status).toBe(404);
  const blob = await uploadBlob(storage(), owner.user, { filename: 'keep.txt', data: Buffer.from('keep') });
  expect((await t.rest('DELETE', `/blobs/${blob.uid}`, { token: owner.token })).status).toBe(404);
  expect(await Blob.findByPk(blob.uid)).not.toBeNull();
});
