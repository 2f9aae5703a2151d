import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { makeBlob, tempDataDir } from './support/blob-factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';
import { blobStep, isJsonMimeType } from '../src/engine/steps/blob';
import { StepError, type StepContext } from '../src/engine/steps/types';
import { Blob } from '../src/models/blobs';
import { engineDeps } from './support/engine-deps';

let t: TestApp;
let data: ReturnType<typeof tempDataDir>;
let owner: TestUser;

beforeAll(async () => {
  data = tempDataDir();
  t = await startTestApp({ dataDir: data.dir });
  owner = await makeUser();
});
afterAll(async () => {
  await t.close();
  data.remove();
});

function context(input: unknown, steps: StepContext['steps'] = {}): StepContext {
  return {
    input,
    steps,
    run: { uid: 'r', userUid: owner.user.uid, circuitUid: 'c', versionUid: 'v' },
    deps: engineDeps(t.app),
    signal: new AbortController().signal,
    depth: 0,
    budget: { maxSteps: 1000, maxResultBytes: 4 * 1024 * 1024, hold: async () => true },
  };
}

test('outputs a JSON blob parsed, with blob_uid rendered from the input', async () => {
  const blob = await makeBlob(t.app.services.blobStorage, owner.user, {
    filename: 'config.json',
    data: '{"model": "small", "n": [1, 2]}',
  });
  const result = await blobStep.execute(
    { id: 'cfg', kind: 'blob', blob_uid: '{{input.config}}' },
    context({ config: blob.uid }),
  );
  expect(result).toEqual({ output: { model: 'small', n: [1, 2] }, credits: 0 });
  // Reading content is not a metadata read.
  expect((await Blob.findByPk(blob.uid))!.readCount).toBe(0);
});

test('outputs any other blob as UTF-8 text, and may take its uid from an earlier step', async () => {
  const blob = await makeBlob(t.app.services.blobStorage, owner.user, {
    filename: 'poem.txt',
    data: 'Roses are red ✿\n',
  });
  const result = await blobStep.execute(
    { id: 'poem', kind: 'blob', blob_uid: '{{steps.pick.output}}' },
    context({}, { pick: { output: blob.uid } }),
  );
  expect(result.output).toBe('Roses are red ✿\n');
});

test('fails the step for an unknown or malformed uid, and for a JSON blob that does not parse', async () => {
  await expect(
    blobStep.execute({ id: 'b', kind: 'blob', blob_uid: '8e6d7c5b-4a39-4281-9f0e-d1c2b3a49586' }, context({})),
  ).rejects.toThrow(StepError);
  await expect(
    blobStep.execute({ id: 'b', kind: 'blob', blob_uid: '{{input.x}}' }, context({ x: '../etc' })),
  ).rejects.toThrow('no blob has the uid');
  await expect(blobStep.execute({ id: 'b', kind: 'blob' }, context({}))).rejects.toThrow('blob_uid must be a string');
  const broken = await makeBlob(t.app.services.blobStorage, owner.user, { filename: 'broken.json', data: '{"oops":' });
  await expect(blobStep.execute({ id: 'b', kind: 'blob', blob_uid: broken.uid }, context({}))).rejects.toThrow(
    'is not valid JSON',
  );
});

test.each([
  ['application/json', true],
  ['application/ld+json', true],
  ['text/json; charset=utf-8', true],
  ['text/plain', false],
  [null, false],
])('isJsonMimeType(%p) is %p', (mime, expected) => {
  expect(isJsonMimeType(mime)).toBe(expected);
});

describe('a circuit run with a blob step', () => {
  test('outputs the JSON blob named by the input, through the whole run pipeline', async () => {
    const blob = await makeBlob(t.app.services.blobStorage, owner.user, {
      filename: 'facts.json',
      data: '{"facts": ["a", "b"]}',
    });
    const { adaptorUid, version } = await makeRunnableCircuit(owner, {
      query_schema: { type: 'object', properties: { blob: { type: 'string' } }, required: ['blob'] },
      steps: [
        { id: 'load', kind: 'blob', blob_uid: '{{input.blob}}' },
        { id: 'count', kind: 'transform', expression: '$count(steps.load.output.facts)' },
      ],
      output: 'steps.count.output',
    });
    const submitted = await submitRun(t, owner.token, adaptorUid, {
      context: { version: version.uid },
      input: { blob: blob.uid },
    });
    expect(submitted.status).toBe(200);
    const run = await waitForRun(t, submitted.body.payload.uid, owner.token);
    expect(run.state).toBe('COMPLETED');
    expect(run.result_blob.output).toBe(2);
    expect(run.result_blob.steps.load.output).toEqual({ facts: ['a', 'b'] });
  });
});
