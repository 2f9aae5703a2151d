import crypto from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
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

interface Answer {
  status: number;
  contentType: string;
  body: string;
  sentBytes: number;
}

/** What the client saw of one chunked upload: the answer if it could read it, and whether its writes hit the hang-up. */
interface Upload {
  answer?: Answer;
  hungUp: boolean;
  sentBytes: number;
  requestId: string;
}

/**
 * Streams `totalBytes` of a JSON-looking body without Content-Length (chunked) over a raw socket, as an
 * attacker would, stops sending as soon as any answer arrives, and resolves when the server closes the
 * connection (the server ends every oversized upload: after a little drain, or at once when it resets).
 *
 * A write that meets the server's hang-up (EPIPE/ECONNRESET) is expected, not a failure: the server drains
 * 4 MiB after its 413 so that a client can read it, but on loopback the kernels' buffers hold more than that,
 * so a client that is descheduled (a loaded machine) can have the server read the rest and close before it
 * reads the answer — and Node drops a socket's unread bytes when a write to it fails.
 */
function upload(path: string, totalBytes: number, headers: Record<string, string> = {}): Promise<Upload> {
  const url = new URL(path, service.url);
  const requestId = `body-limit-${crypto.randomUUID()}`;
  return new Promise((resolve, reject) => {
    let sent = 0;
    let hungUp = false;
    const received: Buffer[] = [];
    const socket = net.connect(Number(url.port), url.hostname);
    const fields = {
      host: url.host,
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...headers,
      'transfer-encoding': 'chunked',
      'x-request-id': requestId,
    };
    const head = [
      `POST ${url.pathname} HTTP/1.1`,
      ...Object.entries(fields).map(([k, v]) => `${k}: ${v}`),
      '',
      '',
    ].join('\r\n');
    const chunk = Buffer.alloc(256 * 1024, 'a');
    const framed = (data: Buffer) =>
      Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
    const answered = () => received.length > 0;
    const pump = () => {
      while (!answered() && !hungUp && !socket.destroyed && sent < totalBytes) {
        const piece =
          sent === 0
            ? Buffer.concat([Buffer.from(head), framed(Buffer.concat([Buffer.from('{"query":"'), chunk]))])
            : framed(chunk);
        sent += piece.length;
        if (!socket.write(piece)) return void socket.once('drain', pump);
      }
      if (!answered() && !hungUp && !socket.destroyed)
        socket.end(Buffer.concat([framed(Buffer.from('"}')), Buffer.from('0\r\n\r\n')]));
    };
    socket.on('connect', pump);
    socket.on('data', (data: Buffer) => {
      received.push(data);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE' || error.code === 'ECONNRESET') hungUp = true;
      else reject(error);
    });
    // A service that neither answers nor hangs up fails here, not at jest's timeout.
    const stuck = setTimeout(() => reject(new Error(`${path}: no close after ${sent} bytes`)), 30_000);
    socket.on('close', () => clearTimeout(stuck));
    socket.on('close', () =>
      resolve({ answer: parseAnswer(Buffer.concat(received), sent), hungUp, sentBytes: sent, requestId }),
    );
  });
}

/** The HTTP answer in `raw`, if all of it arrived (status line, headers and Content-Length bytes of body). */
function parseAnswer(raw: Buffer, sentBytes: number): Answer | undefined {
  const text = raw.toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  if (split < 0) return undefined;
  const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
  const fields = new Map(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  const body = text.slice(split + 4);
  const length = Number(fields.get('content-length'));
  if (!Number.isFinite(length) || Buffer.byteLength(body) < length) return undefined;
  return { status: Number(statusLine.split(' ')[1]), contentType: fields.get('content-type') ?? '', body, sentBytes };
}

/** The status the service logged for the request with id `requestId` (its "request completed" line), once it is there. */
async function loggedStatus(requestId: string): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    for (const line of service.output) {
      if (!line.includes(requestId) || !line.startsWith('{')) continue;
      const entry = JSON.parse(line) as { msg?: string; req?: { id?: string }; res?: { statusCode?: number } };
      if (entry.msg === 'request completed' && entry.req?.id === requestId) return entry.res!.statusCode!;
    }
    if (Date.now() > deadline) throw new Error(`no "request completed" line for ${requestId}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The upload's refusal, from a positive signal either way: the 413 the client read, or — when the server's
 * close reached the client's write before the client could read the answer — the 413 the service logged
 * for that very request (X-Request-Id). Both ways the client stopped well before 64 MiB.
 */
async function refusal(path: string, headers: Record<string, string> = {}): Promise<Upload & { status: number }> {
  const result = await upload(path, 600 * MiB, headers);
  expect(result.sentBytes).toBeLessThan(64 * MiB);
  const status = await loggedStatus(result.requestId);
  if (result.answer) expect(result.answer.status).toBe(status);
  else expect(result.hungUp).toBe(true);
  return { ...result, status };
}

async function healthy(): Promise<boolean> {
  const res = await fetch(`${service.url}/healthz`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
  return res?.status === 200;
}

test('a 600 MB chunked POST to /graphql/stream is refused with 413 after about 1 MiB and the service stays up', async () => {
  const { status, answer, sentBytes } = await refusal('/graphql/stream');
  expect(status).toBe(413);
  expect(sentBytes).toBeLessThan(64 * MiB);
  // The envelope, when the client could read it (always on a quiet machine; the next test reads it on every surface).
  if (answer) {
    expect(answer.contentType).toMatch(/^application\/json/);
    expect(JSON.parse(answer.body)).toEqual({
      errors: [{ message: expect.stringMatching(/1 MiB/), extensions: { code: 'PayloadTooLarge' } }],
    });
  }
  expect(await healthy()).toBe(true);
});

test('a body announced larger than 1 MiB is refused before any of it is read, on every surface', async () => {
  for (const [path, method] of [
    ['/graphql/stream', 'POST'],
    ['/graphql', 'POST'],
    ['/api/v1/circuits', 'POST'],
    ['/api/v1/circuit-adaptors/x/query', 'POST'],
  ]) {
    const answer = await new Promise<Answer>((resolve, reject) => {
      const req = http.request(
        new URL(path, service.url),
        { method, headers: { 'content-type': 'application/json', 'content-length': String(500 * MiB) } },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            body += c;
          });
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              contentType: String(res.headers['content-type'] ?? ''),
              body,
              sentBytes: 0,
            }),
          );
        },
      );
      req.on('error', reject);
      req.write('{"query":"');
      // Never finish the body: the answer must come from the announced length alone.
    });
    expect({ path, status: answer.status, type: answer.contentType }).toEqual({
      path,
      status: 413,
      type: expect.stringMatching(/^application\/json/),
    });
    const body = JSON.parse(answer.body);
    const code = path.startsWith('/api/') ? body.error.code : body.errors[0].extensions.code;
    expect(code).toBe('PayloadTooLarge');
  }
  expect(await healthy()).toBe(true);
});

test('a 600 MB chunked POST to /graphql and to REST is refused with 413 (without a token on REST: 401, unread) and the service stays up', async () => {
  // REST authenticates before it reads a body (src/http/rest-authentication.ts): its routes that take one need a token.
  for (const [path, expected] of [
    ['/graphql', 413],
    ['/api/v1/circuits', 401],
  ] as const) {
    const { status, sentBytes } = await refusal(path, { accept: 'application/json' });
    expect({ path, status }).toEqual({ path, status: expected });
    expect(sentBytes).toBeLessThan(64 * MiB);
  }
  expect(await healthy()).toBe(true);
});
