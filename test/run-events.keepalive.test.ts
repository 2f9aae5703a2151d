import { startTestApp, TestApp } from './support/app';
import { makeUser, HELLO_DEFINITION } from './support/factories';
import { makeRunnableCircuit, submitRun } from './support/run-factories';

let t: TestApp;
// No worker: the run stays PROVISIONED, so its stream stays open and only keep-alives flow.
beforeAll(async () => {
  t = await startTestApp({ runWorker: false, sseKeepAliveMs: 100 });
});
afterAll(async () => {
  await t.close();
});

test('an open run event stream sends a keep-alive comment every SSE_KEEP_ALIVE_MS', async () => {
  const owner = await makeUser();
  const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION);
  const { body } = await submitRun(t, owner.token, adaptorUid, { input: { name: 'Ada' } });
  const abort = new AbortController();
  const res = await fetch(`${t.url}/api/v1/circuit-runs/${body.payload.uid}/events`, {
    headers: { authorization: `Bearer ${owner.token}` },
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + 5_000;
  while ((text.match(/^: keep-alive$/gm) ?? []).length < 3 && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  abort.abort();
  expect((text.match(/^: keep-alive$/gm) ?? []).length).toBeGreaterThanOrEqual(3);
  // The first event was the run itself; nothing else happened, so no other state event followed.
  expect(text.match(/^event: state$/gm)).toHaveLength(1);
});
