import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { QueryTypes } from 'sequelize';
import { startTestApp, TestApp } from './support/app';
import { makeUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import { startHealthyReceiver, timeCompletedWebhook } from './support/webhook-receivers';
import { webhookUserConcurrency } from '../src/webhooks/webhook-jobs';

jest.setTimeout(180_000);

/**
 * Issue 24 ("Webhooks"), per user: a user who points webhooks at many distinct receivers that never
 * answer held up to WEBHOOK_HOST_CONCURRENCY delivery slots per receiver, so with 13 such receivers
 * all 50 slots of a worker, each for the 10 s an attempt may take, and every other user's message
 * waited behind them. Now one user's attempts hold at most WEBHOOK_USER_SHARE_PERCENT of the slots.
 */
const SILENT_RECEIVERS = 40;

/** Receivers (one port each, so each is a receiver of its own) that take every request and never answer. */
async function startSilentReceivers(count: number) {
  let open = 0;
  let maxOpen = 0;
  let requests = 0;
  const servers = await Promise.all(
    Array.from({ length: count }, async () => {
      const server = http.createServer((_req, res) => {
        requests++;
        open++;
        maxOpen = Math.max(maxOpen, open);
        // Never answered: closed when the service gives up on it (its 10 s timeout) or at the end.
        res.once('close', () => {
          open--;
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return server;
    }),
  );
  return {
    urls: servers.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    /** Requests received and not yet given up on by the service, now and at most so far. */
    get open() {
      return open;
    },
    get maxOpen() {
      return maxOpen;
    },
    get requests() {
      return requests;
    },
    close: () =>
      Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.closeAllConnections();
              server.close(() => resolve());
            }),
        ),
      ),
  };
}

describe('webhook delivery is fair between users', () => {
  let t: TestApp;
  let silent: Awaited<ReturnType<typeof startSilentReceivers>>;
  let healthy: Awaited<ReturnType<typeof startHealthyReceiver>>;
  beforeAll(async () => {
    silent = await startSilentReceivers(SILENT_RECEIVERS);
    healthy = await startHealthyReceiver();
    t = await startTestApp();
  });
  afterAll(async () => {
    await silent.close();
    await t.close();
    await healthy.close();
  });

  test(`user B's completed webhook arrives within 5 s while user A's messages to ${SILENT_RECEIVERS} receivers that never answer pile up; A holds at most its share of the delivery slots`, async () => {
    const share = webhookUserConcurrency(t.app.services.config.webhookUserSharePercent);
    expect(share).toBe(25);
    // Without the share, A's receivers could take every slot of the worker.
    expect(SILENT_RECEIVERS * t.app.services.config.webhookHostConcurrency).toBeGreaterThan(50);
    const a = await makeUser({ credits: 100 });
    const b = await makeUser({ credits: 100 });
    const chatty = await makeRunnableCircuit(a, {
      query_schema: { type: 'object' },
      steps: Array.from({ length: 3 }, (_, i) => ({ id: `s${i}`, kind: 'template', template: `step ${i}` })),
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

    // A: one run per silent receiver, each with a start, step and completed messages.
    const uids: string[] = [];
    for (const url of silent.urls) {
      const res = await submitRun(t, a.token, chatty.adaptorUid, {
        input: {},
        webhook: `${url}/hook`,
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
    // Positive signal: A's attempts hold its whole share of the slots (and its messages are written).
    const deadline = Date.now() + 30_000;
    while (silent.open < share && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(silent.open).toBeGreaterThanOrEqual(share);
    const pendingBefore = await pendingOfA();
    expect(pendingBefore).toBeGreaterThanOrEqual(SILENT_RECEIVERS * 4);

    const loaded = await deliveredAfter();
    const stillPending = await pendingOfA();
    console.log(
      `B's completed webhook, from the query (after the run ended): idle ${idle.total.toFixed(0)} (${idle.afterEnd.toFixed(0)}) ms, ` +
        `with A's ${stillPending} messages pending to ${SILENT_RECEIVERS} silent receivers and ${silent.open} of A's attempts in flight ` +
        `${loaded.total.toFixed(0)} (${loaded.afterEnd.toFixed(0)}) ms; A's attempts in flight at most ${silent.maxOpen}, ${silent.requests} in all`,
    );
    expect(loaded.total).toBeLessThanOrEqual(5_000);
    // A's messages still pile up (none was answered), and never more than its share were attempted at once.
    expect(stillPending).toBeGreaterThanOrEqual(pendingBefore);
    expect(silent.maxOpen).toBeLessThanOrEqual(share);
    // Messages put off for A's share are not counted as attempts: A's counted attempts are the requests
    // the receivers got (plus at most a share claimed and not yet arrived), not the hundreds of put-offs.
    const [counts] = await t.app.services.sequelize.query<{ attempts: string }>(
      `SELECT sum(attempts) AS attempts FROM webhook_deliveries WHERE run_uid = ANY($1::uuid[])`,
      { bind: [uids], type: QueryTypes.SELECT },
    );
    expect(Number(counts.attempts)).toBeLessThanOrEqual(silent.requests + share);
  });
});
