import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { TestApp } from './app';
import { submitRun, waitForRun } from './run-factories';

/** A webhook receiver that answers 204 at once and notes when each `completed` message arrived, by run uid. */
export async function startHealthyReceiver() {
  const arrivals = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString()) as { type: string; data: { uid: string } };
      if (message.type === 'circuit_run.completed') arrivals.set(message.data.uid, performance.now());
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Submits a run of `adaptorUid` as `token` with a `completed` webhook to `receiver`, and times the message:
 * from the submit (`total`) and from the run's end as its reader saw it (`afterEnd`), in ms.
 */
export async function timeCompletedWebhook(
  t: TestApp,
  token: string,
  adaptorUid: string,
  receiver: Awaited<ReturnType<typeof startHealthyReceiver>>,
) {
  const started = performance.now();
  const res = await submitRun(t, token, adaptorUid, {
    input: {},
    webhook: `${receiver.url}/hook`,
    webhook_events_filter: ['completed'],
  });
  const uid = res.body.payload.uid as string;
  expect((await waitForRun(t, uid, token)).state).toBe('COMPLETED');
  const ended = performance.now();
  const deadline = Date.now() + 60_000;
  while (!receiver.arrivals.has(uid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(receiver.arrivals.has(uid)).toBe(true);
  const arrived = receiver.arrivals.get(uid)!;
  return { total: arrived - started, afterEnd: arrived - ended };
}
