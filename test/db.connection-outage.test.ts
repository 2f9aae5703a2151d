import crypto from 'node:crypto';
import net from 'node:net';
import { Writable } from 'node:stream';
import { Client } from 'pg';
import pino from 'pino';
import { listen, type Listening } from '../src/db/listen';
import { startWorkerPresence } from '../src/runs/worker-presence';

/**
 * A TCP proxy in front of the test PostgreSQL: `cut()` drops every connection through it and refuses
 * new ones (PostgreSQL is down, as far as the listener can tell); `restore()` lets them through again.
 */
async function startProxy(target: URL) {
  let down = false;
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (down) return void client.destroy();
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        open.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    cut() {
      down = true;
      for (const socket of open) socket.destroy();
    },
    restore() {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const until = async (what: string, probe: () => boolean, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let proxy: Awaited<ReturnType<typeof startProxy>>;
let direct: Client;
beforeAll(async () => {
  proxy = await startProxy(new URL(process.env.TEST_PG_ADMIN_URL!));
  direct = new Client({ connectionString: process.env.TEST_PG_ADMIN_URL });
  await direct.connect();
});
afterAll(async () => {
  await direct?.end();
  await proxy?.close();
});

function capture() {
  const lines: Record<string, any>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(
        ...String(chunk)
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Record<string, any>),
      );
      done();
    },
  });
  return { lines, log: pino({ level: 'debug' }, sink) };
}

async function startListening(log: pino.Logger) {
  const channel = `outage_${crypto.randomBytes(4).toString('hex')}`;
  const received: string[] = [];
  let listenings = 0;
  const listening: Listening = await listen({
    databaseUrl: proxy.url,
    channel,
    applicationName: 'listen-outage-test',
    log,
    retryMs: 20,
    onNotification: (payload) => received.push(payload ?? ''),
    onListening: () => {
      listenings += 1;
    },
  });
  const notify = (payload: string) => direct.query('SELECT pg_notify($1, $2)', [channel, payload]);
  return { channel, received, listening, notify, listenings: () => listenings };
}

test('an outage logs one warn line without a stack when LISTEN is lost and one info line when it is back, nothing per retry', async () => {
  const { lines, log } = capture();
  const l = await startListening(log);
  try {
    await l.notify('before');
    await until('the first notification', () => l.received.includes('before'));
    expect(lines).toEqual([]);

    for (const outage of [1, 2]) {
      proxy.cut();
      await until('the lost line', () => lines.length === 2 * outage - 1);
      // About 25 reconnect attempts fail while the proxy refuses connections.
      await sleep(500);
      expect(lines).toHaveLength(2 * outage - 1);
      proxy.restore();
      await until('LISTEN again', () => l.listenings() === outage + 1);
      await l.notify(`after ${outage}`);
      await until('a notification after the outage', () => l.received.includes(`after ${outage}`));

      const [lost, restored] = lines.slice(2 * outage - 2);
      expect(lost).toMatchObject({
        level: 40,
        msg: 'LISTEN connection lost; reconnecting',
        channel: l.channel,
        reason: expect.any(String),
      });
      expect(lost).not.toHaveProperty('err');
      expect(JSON.stringify(lost)).not.toMatch(/\n\s+at /);
      expect(restored).toMatchObject({
        level: 30,
        msg: 'LISTEN connection restored',
        channel: l.channel,
        outage_ms: expect.any(Number),
      });
      expect(restored.outage_ms).toBeGreaterThanOrEqual(500);
      expect(restored.failed_attempts).toBeGreaterThanOrEqual(5);
    }
    expect(lines).toHaveLength(4);
  } finally {
    proxy.restore();
    await l.listening.close();
  }
});

test('closing the listener during an outage logs nothing more and stops retrying', async () => {
  const { lines, log } = capture();
  const l = await startListening(log);
  proxy.cut();
  try {
    await until('the lost line', () => lines.length === 1);
    await l.listening.close();
  } finally {
    proxy.restore();
  }
  await sleep(200);
  expect(lines).toHaveLength(1);
  await l.notify('after close');
  await sleep(100);
  expect(l.received).toEqual([]);
  expect(l.listenings()).toBe(1);
});

test("a worker's presence connection comes back after an outage of any length, logged the same way", async () => {
  const { lines, log } = capture();
  const presence = await startWorkerPresence(proxy.url, log);
  try {
    const before = presence.current().backendPid;
    expect(before).toEqual(expect.any(Number));
    proxy.cut();
    await until('the presence to be lost', () => presence.current().backendPid === null);
    // Several reconnect periods (500 ms each): every attempt fails while the proxy refuses connections.
    await sleep(1_600);
    proxy.restore();
    await until('the presence to be back', () => presence.current().backendPid !== null, 5_000);
    const after = presence.current().backendPid!;
    expect(after).not.toBe(before);
    const { rows } = await direct.query('SELECT application_name FROM pg_stat_activity WHERE pid = $1', [after]);
    expect(rows).toEqual([{ application_name: 'circuit-worker-presence' }]);
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [40, 'worker presence connection lost; reconnecting'],
      [30, 'worker presence connection restored'],
    ]);
    expect(lines[0]).not.toHaveProperty('err');
    expect(lines[1].failed_attempts).toBeGreaterThanOrEqual(2);
  } finally {
    proxy.restore();
    await presence.close();
  }
});
