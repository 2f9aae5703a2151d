import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { QueryTypes } from 'sequelize';
import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import { startHealthyReceiver, timeCompletedWebhook } from './support/webhook-receivers';

jest.setTimeout(180_000);

/** A receiver that takes every request and never answers. */
async function startSilentReceiver() {
  const sockets = new Set<Socket>();
  let requests = 0;
  const server = http.createServer(() => {
    requests++;
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('webhook delivery is fair between receivers', () => {
  let t: TestApp;
  let silent: Awaited<ReturnType<typeof startSilentReceiver>>;
  let healthy: Awaited<ReturnType<typeof startHealthyReceiver>>;
  beforeAll(async () => {
    silent = await startSilentReceiver();
    healthy = await startHealthyReceiver();
    t = await startTestApp();
  });
  afterAll(async () => {
    await silent.close();
    await t.close();
    await healthy.close();
  });

  test("user B's completed webhook arrives within 5 s while user A's ~600 messages to a receiver that never answers are pending", async () => {
    const a = await makeUser({ credits: 100 });
    const b = await makeUser({ credits: 100 });
    const many = await makeRunnableCircuit(a, {
      query_schema: { type: 'object' },
      steps: Array.from({ length: 100 }, (_, i) => ({ id: `s${i}`, kind: 'template', template: `step ${i}` })),
    });
    const simple = await makeRunnableCircuit(b, {
      query_schema: { type: 'object' },
      steps: [{ id: 'hi', kind: 'template', template: 'hi' }],
    });
    const deliveredAfter = () => timeCompletedWebhook(t, b.token, simple.adaptorUid, healthy);
    await deliveredAfter();
    const idle = [await deliveredAfter(), await deliveredAfter(), await deliveredAfter()].sort(
      (x, y) => x.total - y.total,
    )[1];

    const uids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await submitRun(t, a.token, many.adaptorUid, {
        input: {},
        webhook: `${silent.url}/hook`,
        webhook_events_filter: ['start', 'step', 'completed'],
      });
      uids.push(res.body.payload.uid as string);
    }
    for (const uid of uids) expect((await waitForRun(t, uid, a.token, 60_000)).state).toBe('COMPLETED');
    const pendingOfA = async () => {
      const [row] = await t.app.services.sequelize.query<{ n: string }>(
        `SELECT count(*) AS n FROM webhook_deliveries WHERE run_uid = ANY($1::uuid[]) AND status = 'pending'`,
        { bind: [uids], type: QueryTypes.SELECT },
      );
      return Number(row.n);
    };
    // Positive signal: A's messages are written and the silent receiver is being knocked on.
    const deadline = Date.now() + 30_000;
    while ((silent.requests === 0 || (await pendingOfA()) < 600) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(silent.requests).toBeGreaterThan(0);
    expect(await pendingOfA()).toBeGreaterThanOrEqual(600);

    const loaded = await deliveredAfter();
    const stillPending = await pendingOfA();
    console.log(
      `B's completed webhook, from the query (after the run ended): idle ${idle.total.toFixed(0)} (${idle.afterEnd.toFixed(0)}) ms, ` +
        `with A's ${stillPending} messages pending to a silent receiver ${loaded.total.toFixed(0)} (${loaded.afterEnd.toFixed(0)}) ms; the silent receiver got ${silent.requests} requests`,
    );
    expect(loaded.total).toBeLessThanOrEqual(5_000);
    expect(stillPending).toBeGreaterThanOrEqual(590);
    // At most WEBHOOK_HOST_CONCURRENCY (4) attempts at once reach the silent receiver.
    expect(silent.requests).toBeLessThanOrEqual(4 * Math.ceil(60 / 10) + 4);
  });
});
