import type { Blob } from '../src/models/blobs';
import { startTestApp, TestApp } from './support/app';
import { makeBlob, tempDataDir } from './support/blob-factories';
import { makeUser, TestUser } from './support/factories';

/**
 * The blob policy as a table, through REST: role × action → the exact status, or what the object
 * shows (`storage`: blob_type and path are present; `canDelete`: its can_delete). Blobs have no
 * visibility: anyone reads them; the storage layout is for admin tokens; nobody deletes,
 * not even the uploader.
 */
type Role = 'anonymous' | 'other' | 'uploader' | 'admin';
type Action = 'get' | 'download' | 'storage' | 'canDelete';
type Row = Record<Action, number | boolean>;

const READER: Row = { get: 200, download: 302, storage: false, canDelete: false };

const TABLE: Record<Role, Row> = {
  anonymous: READER,
  other: READER,
  uploader: READER,
  admin: { get: 200, download: 302, storage: true, canDelete: false },
};

let t: TestApp;
let data: ReturnType<typeof tempDataDir>;
let blob: Blob;
const users = {} as Record<Exclude<Role, 'anonymous'>, TestUser>;

beforeAll(async () => {
  data = tempDataDir();
  t = await startTestApp({ dataDir: data.dir });
  users.uploader = await makeUser();
  users.other = await makeUser();
  users.admin = await makeUser({ isAdmin: true });
  blob = await makeBlob(t.app.services.blobStorage, users.uploader.user, { filename: 'notes.txt', data: 'some notes' });
});
afterAll(async () => {
  await t.close();
  data.remove();
});

async function perform(action: Action, token: string | undefined): Promise<number | boolean> {
  switch (action) {
    case 'get':
      return (await t.rest('GET', `/blobs/${blob.uid}`, { token })).status;
    case 'download':
      return (await t.rest('GET', `/blobs/${blob.uid}/download`, { token })).status;
    case 'storage': {
      const { payload } = (await t.rest('GET', `/blobs/${blob.uid}`, { token })).body;
      // Both or neither: one without the other would be a half-applied rule.
      expect('blob_type' in payload).toBe('path' in payload);
      return 'path' in payload;
    }
    case 'canDelete':
      return (await t.rest('GET', `/blobs/${blob.uid}`, { token })).body.payload.can_delete;
  }
}

const cases: [Role, Action, number | boolean][] = [];
for (const [role, row] of Object.entries(TABLE) as [Role, Row][]) {
  for (const [action, expected] of Object.entries(row) as [Action, number | boolean][])
    cases.push([role, action, expected]);
}

test.each(cases)('%s caller, %s → %p', async (role, action, expected) => {
  const token = role === 'anonymous' ? undefined : users[role].token;
  expect(await perform(action, token)).toBe(expected);
});
