import http from 'node:http';
import { createTestDatabase } from './support/database';
import { spawnServiceProcess, ServiceProcess } from './support/run-factories';

// Black-box: the built service in its own process, so an attack that kills it cannot take jest with it.
jest.setTimeout(120_000);

const MiB = 1024 * 1024;
let service: ServiceProcess;
let drop: () => Promise<void>;

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  service = await spawnServiceProcess('api', database.url, { RUN_WORKER: 'false' });
});
afterAll(async () => {
  await service?.kill();
  await drop?.();
});

interface Answer { status: number; contentType: string; body: string; sentBytes: number }

/**
 * Streams `totalBytes` of a JSON-looking body without Content-Length (chunked), as an attacker
 * would, and stops sending as soon as the server answers or hangs up.
 */
function streamBody(path: string, method: string, totalBytes: number, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(path, service.url);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = http.request(url, { method, headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers } }, (res) => {
      answered = true;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { body += chunk; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body, sentBytes: sent }));
    });
    req.on('error', (error) => {
      if (!answered) reject(Object.assign(error, { sentBytes: sent }));
    });
    const chunk = Buffer.alloc(256 * 1024, 'a');
    const prefix = Buffer.from('{"query":"');
    const pump = () => {
      while (!answered && sent < totalBytes) {
        const piece = sent === 0 ? Buffer.concat([prefix, chunk]) : chunk;
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
      if (!answered) req.end('"}');
    };
    pump();
  });
}

/**
 * streamBody, again when the server's hang-up reached the client's write before its 413 could be read
 * (EPIPE/ECONNRESET: on a loaded machine the refusal sometimes arrives as the reset alone).
 */
async function streamRefused(path: string, method: string, totalBytes: number, headers: Record<string, string> = {}): Promise<Answer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await streamBody(path, method, totalBytes, headers);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (attempt >= 3 || (code !== 'EPIPE' && code !== 'ECONNRESET')) throw error;
      expect((error as { sentBytes: number }).sentBytes).toBeLessThan(64 * MiB);
    }
  }
}

async function healthy(): Promise<boolean> {
  const res = await fetch(`${service.url}/healthz`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
  return res?.status === 200;
}

test('a 600 MB chunked POST to /graphql/stream is refused with 413 after about 1 MiB and the service stays up', async () => {
  const answer = await streamRefused('/graphql/stream', 'POST', 600 * MiB);
  expect(answer.status).toBe(413);
  expect(answer.contentType).toMatch(/^application\/json/);
  expect(JSON.parse(answer.body)).toEqual({ errors: [{ message: expect.stringMatching(/1 MiB/), extensions: { code: 'PayloadTooLarge' } }] });
  expect(answer.sentBytes).toBeLessThan(64 * MiB);
  expect(await healthy()).toBe(true);
});

test('a body announced larger than 1 MiB is refused before any of it is read, on every surface', async () => {
  for (const [path, method] of [['/graphql/stream', 'POST'], ['/graphql', 'POST'], ['/api/v1/circuits', 'POST'], ['/api/v1/circuit-adaptors/x/query', 'POST']]) {
    const answer = await new Promise<Answer>((resolve, reject) => {
      const req = http.request(new URL(path, service.url), { method, headers: { 'content-type': 'application/json', 'content-length': String(500 * MiB) } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => { body += c; });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body, sentBytes: 0 }));
      });
      req.on('error', reject);
      req.write('{"query":"');
      // Never finish the body: the answer must come from the announced length alone.
    });
    expect({ path, status: answer.status, type: answer.contentType }).toEqual({ path, status: 413, type: expect.stringMatching(/^application\/json/) });
    const body = JSON.parse(answer.body);
    const code = path.startsWith('/api/') ? body.error.code : body.errors[0].extensions.code;
    expect(code).toBe('PayloadTooLarge');
  }
  expect(await healthy()).toBe(true);
});

test('a 600 MB chunked POST to /graphql and to REST is refused with 413 and the service stays up', async () => {
  for (const path of ['/graphql', '/api/v1/circuits']) {
    const answer = await streamRefused(path, 'POST', 600 * MiB, { accept: 'application/json' });
    expect({ path, status: answer.status }).toEqual({ path, status: 413 });
    expect(answer.sentBytes).toBeLessThan(64 * MiB);
  }
  expect(await healthy()).toBe(true);
});
