import { browserSuite } from './support/browser';
import { HELLO_DEFINITION, makeUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';

const suite = browserSuite('browser.graphiql.test');
const { maybe } = suite;

/** GraphiQL's editors are CodeMirror 5 instances; set their text directly (typing would auto-close brackets). */
async function setEditor(page: import('playwright-core').Page, selector: string, text: string): Promise<void> {
  await page.waitForSelector(`${selector} .CodeMirror`);
  await page.evaluate(
    ([sel, value]) => {
      (
        document.querySelector(`${sel} .CodeMirror`) as unknown as { CodeMirror: { setValue(v: string): void } }
      ).CodeMirror.setValue(value);
    },
    [selector, text] as const,
  );
}

maybe('GraphiQL runs a subscription over graphql-sse with the token from its header editor', async () => {
  const owner = await makeUser();
  const { adaptorUid } = await makeRunnableCircuit(owner, HELLO_DEFINITION, { isPrivate: true });
  const { body } = await submitRun(suite.t, owner.token, adaptorUid, { input: { name: 'browser' } });
  await waitForRun(suite.t, body.payload.uid, owner.token);

  const page = await suite.browser.newPage();
  try {
    const streamRequests: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/graphql/stream')) streamRequests.push(request.method());
    });
    await page.goto(`${suite.t.url}/graphql`);
    await setEditor(
      page,
      '.graphiql-query-editor',
      `subscription { circuitRunUpdated(uid: "${body.payload.uid}") { uid state } }`,
    );
    await page.getByText('Headers', { exact: true }).click();
    // The tab switch is a re-render: write only once the headers editor (the second) is the one shown,
    // or on a loaded machine the token can land in the variables editor.
    await page.waitForFunction(() => {
      const editors = document.querySelectorAll('.graphiql-editor-tool .graphiql-editor');
      return (
        editors.length === 2 && editors[0].classList.contains('hidden') && !editors[1].classList.contains('hidden')
      );
    });
    await setEditor(
      page,
      '.graphiql-editor-tool .graphiql-editor:not(.hidden)',
      JSON.stringify({ Authorization: `Bearer ${owner.token}` }),
    );
    await page.click('.graphiql-execute-button');
    await page.waitForFunction(
      () => {
        const response = document.querySelector('.graphiql-response .CodeMirror') as unknown as {
          CodeMirror: { getValue(): string };
        } | null;
        return response?.CodeMirror.getValue().includes('COMPLETED');
      },
      undefined,
      { timeout: 15_000 },
    );
    const text = await page.evaluate(() =>
      (
        document.querySelector('.graphiql-response .CodeMirror') as unknown as { CodeMirror: { getValue(): string } }
      ).CodeMirror.getValue(),
    );
    expect(JSON.parse(text)).toEqual({ data: { circuitRunUpdated: { uid: body.payload.uid, state: 'COMPLETED' } } });
    expect(streamRequests).toContain('POST');
  } finally {
    await page.close();
  }
});
