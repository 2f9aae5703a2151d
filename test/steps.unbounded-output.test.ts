import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { QueryTypes } from 'sequelize';
import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import { makeRunnableCircuit, startHttpTarget, submitRun, waitForRun } from './support/run-factories';

jest.setTimeout(120_000);

const RESULT_LIMIT = 4 * 1024 * 1024;

/**
 * The most one loopback connection can hold in flight: the kernel's send and receive buffers at their maxima
 * (autotuning grows them under load; 4 + 32 MiB on the reference machine), plus what Node's streams buffer.
 */
function inFlightMax(): number {
  const max = (file: string) => {
    try {
      return Number(readFileSync(file, 'utf8').trim().split(/\s+/)[2]) || 0;
    } catch {
      return 0;
    }
  };
  const kernel = max('/proc/sys/net/ipv4/tcp_rmem') + max('/proc/sys/net/ipv4/tcp_wmem');
  return (kernel || 8 * 1024 * 1024) + 1024 * 1024;
}

/** A chat-completions endpoint whose reply never ends: 16 KiB deltas as fast as the reader takes them. */
async function startEndlessModel() {
  const state = { sent: 0, closed: false };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const piece = 'x'.repeat(16 * 1024);
      const line = `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`;
      const pump = () => {
        while (!res.destroyed) {
          state.sent += piece.length;
          if (!res.write(line)) return void res.once('drain', pump);
        }
      };
      res.on('close', () => {
        state.closed = true;
      });
      pump();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('unbounded step output', () => {
  let t: TestApp;
  let model: Awaited<ReturnType<typeof startEndlessModel>>;
  beforeAll(async () => {
    model = await startEndlessModel();
    t = await startTestApp({ openaiBaseUrl: model.baseUrl, openaiApiKey: 'test-key', runMaxResultBytes: RESULT_LIMIT });
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  test('an llm step against a model that streams forever stops at the result limit: StepFailed, at most the limit stored as output events', async () => {
    const owner = await makeUser({ credits: 100 });
    const { adaptorUid } = await makeRunnableCircuit(owner, {
      query_schema: { type: 'object' },
      steps: [{ id: 'talk', kind: 'llm', model: 'm', messages: [{ role: 'user', content: 'go on' }], max_tokens: 100 }],
    });
    const uid = (await submitRun(t, owner.token, adaptorUid, { input: {} })).body.payload.uid as string;
    const run = await waitForRun(t, uid, owner.token, 60_000);
    expect(run.state).toBe('EXCEPTION');
    expect(run.error.code).toBe('StepFailed');
    expect(run.error.message).toMatch(/reply is larger than \d+ bytes/);
    // The stream was closed, not read to the deadline: what the model sent is the limit plus what was in flight
    // (read to the deadline, it would be gigabytes).
    expect(model.state.closed).toBe(true);
    expect(model.state.sent).toBeLessThan(RESULT_LIMIT + inFlightMax());
    const [stored] = await t.app.services.sequelize.query<{ bytes: string | null }>(
      `SELECT sum(octet_length(data->>'delta')) AS bytes FROM circuit_run_events WHERE run_uid = $1 AND kind = 'output'`,
      { bind: [uid], type: QueryTypes.SELECT },
    );
    expect(Number(stored.bytes ?? 0)).toBeGreaterThan(0);
    expect(Number(stored.bytes)).toBeLessThanOrEqual(RESULT_LIMIT);
  });

  test('an http step answering JSON nested 20,000 deep ends StepFailed, not Internal', async () => {
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const upstream = await startHttpTarget((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(deep);
    });
    try {
      const owner = await makeUser({ credits: 10 });
      const { adaptorUid } = await makeRunnableCircuit(owner, {
        query_schema: { type: 'object' },
        steps: [{ id: 'fetch', kind: 'http', method: 'GET', url: upstream.url }],
      });
      const uid = (await submitRun(t, owner.token, adaptorUid, { input: {} })).body.payload.uid as string;
      const run = await waitForRun(t, uid, owner.token, 30_000);
      expect(run.state).toBe('EXCEPTION');
      expect(run.error.code).toBe('StepFailed');
      expect(run.error.message).toMatch(/nests deeper than 512 levels/);
      // The run and its events read back as JSON.
      const events = await t.rest('GET', `/circuit-runs/${uid}/events`, { token: owner.token });
      expect(events.status).toBeLessThan(500);
    } finally {
      await upstream.close();
    }
  });
});
