import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, TestApp } from './support/app';
import { webBrowser } from './support/web-browser';
import { createUser } from '../src/commands/create-user';
import { Blob as BlobRow } from '../src/models/blobs';

jest.setTimeout(120_000);

/**
 * Issue #24 (slow bodies), for bodies other than JSON: a blob upload (multipart, streamed into the
 * storage through a temporary file) or a /settings form whose body stalls is answered 408
 * `RequestTimeout` after BODY_TIMEOUT_MS and its connection closed, and the upload's temporary file
 * is removed: before, such a body held its connection, its parser and its temporary file for Node's
 * 300 s request timeout. An upload that keeps coming, however slowly, is not cut off.
 */
const TIMEOUT_MS = 1_500;
const BOUNDARY = '----circuitsSlowUpload';

let t: TestApp;
let dataDir: string;
let blobsDir: string;
let port: number;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'circuits-slow-uploads-'));
  blobsDir = path.join(dataDir, 'blobs');
  t = await startTestApp({ runWorker: false, dataDir, bodyTimeoutMs: TIMEOUT_MS });
  port = Number(new URL(t.url).port);
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function signedIn(name: string) {
  const user = await createUser({ username: `${name}${Date.now().toString(36)}`, password: 'correct horse battery' });
  const web = webBrowser(t.url, '198.51.100.40');
  expect((await web.signIn(user.username, 'correct horse battery')).status).toBe(303);
  return { user, web, csrf: await web.csrf('/settings/blobs') };
}

interface Raw {
  answer: Promise<string>;
  sentAt: number;
  socket: net.Socket;
}

/** Sends a request head and `parts` of its body (one every `everyMs`), then nothing more; resolves with all the server says until it closes. */
function rawRequest(head: string, parts: Buffer[], everyMs = 0): Raw {
  const socket = net.connect({ host: '127.0.0.1', port });
  let text = '';
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  socket.on('error', () => {});
  socket.once('connect', () => {
    socket.write(head);
    parts.forEach((part, i) =>
      setTimeout(() => {
        if (!socket.destroyed) socket.write(part);
      }, i * everyMs),
    );
  });
  return { answer: new Promise((resolve) => socket.once('close', () => resolve(text))), sentAt: Date.now(), socket };
}

function uploadHead(cookie: string, contentLength: number): string {
  return (
    `POST /settings/blobs HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\n` +
    `Content-Length: ${contentLength}\r\n\r\n`
  );
}

/** The multipart form's start: the CSRF field, then the head of the file part. */
function formStart(csrf: string, filename: string): Buffer {
  return Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${csrf}\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
}
const formEnd = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

const tempFiles = () =>
  fs.existsSync(blobsDir) ? fs.readdirSync(blobsDir).filter((name) => name.startsWith('.tmp-')) : [];

test('a blob upload whose body stalls is 408 after BODY_TIMEOUT_MS, its connection closed, its temporary file removed and nothing stored', async () => {
  const { user, web, csrf } = await signedIn('stall');
  const start = formStart(csrf, 'stalled.bin');
  // 256 KiB of a 10 MiB file: past the type sniffing, so the file is already streaming into storage.
  const sent = rawRequest(uploadHead(web.cookie, start.length + 10 * 1024 * 1024 + formEnd.length), [
    start,
    Buffer.alloc(256 * 1024, 0x5a),
  ]);
  // Positive signal first: the upload's temporary file exists while the body is awaited.
  const seenBy = Date.now() + 5_000;
  while (tempFiles().length === 0 && Date.now() < seenBy) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(tempFiles()).toHaveLength(1);

  const answer = await sent.answer;
  const took = Date.now() - sent.sentAt;
  expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  expect(answer).toMatch(/connection: close/i);
  expect(answer).toContain('"code":"RequestTimeout"');
  expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
  expect(took).toBeLessThan(TIMEOUT_MS + 5_000);
  const goneBy = Date.now() + 5_000;
  while (tempFiles().length > 0 && Date.now() < goneBy) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(tempFiles()).toEqual([]);
  expect(fs.readdirSync(blobsDir)).toEqual([]);
  expect(await BlobRow.count({ where: { user_uid: user.uid } })).toBe(0);
  // The service goes on: the same user's next upload is stored.
  const form = new FormData();
  form.set('_csrf', csrf);
  form.set('file', new Blob([Buffer.alloc(1024, 1)]), 'after.bin');
  expect((await web.request('POST', '/settings/blobs', form)).status).toBe(303);
  expect(await BlobRow.count({ where: { user_uid: user.uid } })).toBe(1);
});

test('an upload that keeps coming, a chunk every half BODY_TIMEOUT_MS for twice as long as it, is stored', async () => {
  const { user, web, csrf } = await signedIn('slow');
  const chunk = Buffer.alloc(8 * 1024, 0x61);
  const chunks = [formStart(csrf, 'slow.bin'), ...Array.from({ length: 6 }, () => chunk), formEnd];
  const length = chunks.reduce((sum, part) => sum + part.length, 0);
  const sent = rawRequest(uploadHead(web.cookie, length), chunks, TIMEOUT_MS / 2);
  const head = await new Promise<string>((resolve) => {
    let text = '';
    sent.socket.on('data', (data: Buffer) => {
      text += data.toString();
      if (text.includes('\r\n\r\n')) resolve(text);
    });
  });
  sent.socket.destroy();
  expect(head).toMatch(/^HTTP\/1\.1 303 /);
  expect(Date.now() - sent.sentAt).toBeGreaterThanOrEqual(2 * TIMEOUT_MS);
  const [stored] = await BlobRow.findAll({ where: { user_uid: user.uid } });
  expect(Number(stored.bytes)).toBe(6 * chunk.length);
  expect(tempFiles()).toEqual([]);
});

test('a /settings form whose body stalls is 408 after BODY_TIMEOUT_MS and its connection closed', async () => {
  const { web, csrf } = await signedIn('form');
  const body = Buffer.from(`_csrf=${encodeURIComponent(csrf)}&name=stalled`);
  const sent = rawRequest(
    `POST /settings/tokens HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${web.cookie}\r\n` +
      `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length + 100}\r\n\r\n`,
    [body],
  );
  const answer = await sent.answer;
  expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  expect(answer).toMatch(/connection: close/i);
  expect(answer).toContain('"code":"RequestTimeout"');
  expect(Date.now() - sent.sentAt).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
});
