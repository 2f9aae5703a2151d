import { browserSuite } from './support/browser';
import { makeCircuit, makeUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import { startScriptedModel } from './support/fake-agent-model';

/**
 * An agent step's tool call waiting for approval is decided in /settings → Runs like an approval step:
 * approved, the tool runs; rejected, the model is told and the run goes on.
 */

const PASSWORD = 'browser-test-password';
let model: Awaited<ReturnType<typeof startScriptedModel>>;
beforeAll(async () => {
  // Turn 1 asks to add; turn 2 answers with what the tool said.
  model = await startScriptedModel((request) => {
    const told = request.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    return told.length > 0
      ? { content: told.join(' | ') }
      : { tool_calls: [{ id: 'c1', name: 'add', arguments: '{"a": 20, "b": 22}' }] };
  });
});
afterAll(async () => {
  await model.close();
});
const suite = browserSuite('browser.agent-approvals.test', () => ({
  openaiBaseUrl: model.baseUrl,
  openaiApiKey: 'sk-test',
}));

suite.maybe(
  'a tool call waiting for approval is approved, and another rejected, from the Runs page',
  async () => {
    const owner = await makeUser({ username: 'agent-owner', password: PASSWORD });
    const add = await makeCircuit(
      owner,
      { description: 'Adds two numbers' },
      {
        query_schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
        steps: [{ id: 'sum', kind: 'transform', expression: 'input.a + input.b' }],
      },
    );
    const { adaptorUid } = await makeRunnableCircuit(
      owner,
      {
        query_schema: { type: 'object' },
        steps: [
          {
            id: 'helper',
            kind: 'agent',
            model: 'gpt-agent',
            prompt: 'Add 20 and 22',
            tools: [{ name: 'add', circuit_uid: add.circuit.uid }],
            approve_tools: 'all',
          },
        ],
      },
      { name: 'adder-agent' },
    );
    const uids: string[] = [];
    for (let i = 0; i < 2; i++)
      uids.push((await submitRun(suite.t, owner.token, adaptorUid, { input: {} })).body.payload.uid);
    for (const uid of uids) {
      for (let i = 0; i < 400; i++) {
        const run = (await suite.t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token })).body.payload;
        if (run.waiting_for) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }

    const context = await suite.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${suite.t.url}/settings`);
    await page.waitForURL('**/settings/sign-in');
    await page.getByLabel('Username').fill('agent-owner');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/settings/tokens');
    await page.getByRole('link', { name: 'Runs' }).click();
    await page.waitForURL('**/settings/runs');
    const card = (uid: string) => page.locator(`[data-waiting-run="${uid}"]`);
    for (const uid of uids) {
      expect(await card(uid).getAttribute('data-waiting-step')).toBe('helper:c1');
      expect((await card(uid).locator('[data-prompt]').innerText()).trim()).toBe(
        'Allow the agent step helper to call the tool add with the arguments {"a":20,"b":22}?',
      );
    }

    await card(uids[0]).getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL('**/settings/runs');
    await page.getByRole('status').filter({ hasText: 'helper:c1 approved' }).waitFor();
    await card(uids[1]).getByLabel('Comment (optional)').fill('too much');
    await card(uids[1]).getByRole('button', { name: 'Reject' }).click();
    await page.getByRole('status').filter({ hasText: 'helper:c1 rejected' }).waitFor();
    await context.close();

    const approved = await waitForRun(suite.t, uids[0], owner.token, 30_000);
    expect(approved.state).toBe('COMPLETED');
    expect(approved.result_blob.output.answer).toBe('42');
    const rejected = await waitForRun(suite.t, uids[1], owner.token, 30_000);
    expect(rejected.state).toBe('COMPLETED');
    expect(rejected.result_blob.output.answer).toBe('Error: a person rejected this call: too much');
  },
  90_000,
);
