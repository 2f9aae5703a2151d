import { Writable } from 'node:stream';
import pino from 'pino';
import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, submitRun, waitForRun } from './support/run-factories';

/** Every line the app logs at info, as the service writes them (JSON). */
const lines: Record<string, any>[] = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, any>);
    done();
  },
});

let t: TestApp;
let owner: TestUser;

const endedLines = (uid: string) => lines.filter((line) => line.run === uid && line.msg === 'run ended');
const SECRET_INPUT = 'Ada-private-input-value';

async function runTo(definition: Parameters<typeof makeRunnableCircuit>[1]) {
  const { circuit, adaptorUid } = await makeRunnableCircuit(owner, definition);
  const submitted = await submitRun(t, owner.token, adaptorUid, { input: { name: SECRET_INPUT } });
  expect(submitted.status).toBe(200);
  const run = await waitForRun(t, submitted.body.payload.uid, owner.token);
  // The line is written right after the charge commits; the run may be read just before.
  for (let i = 0; i < 100 && endedLines(run.uid).length === 0; i += 1) await new Promise((r) => setTimeout(r, 20));
  return { circuit, run };
}

describe('with a worker', () => {
  beforeAll(async () => {
    t = await startTestApp({}, { log: pino({ level: 'info' }, sink) });
    owner = await makeUser({ credits: 50 });
  });
  afterAll(async () => {
    await t?.close();
  });

  test('a completed run logs one info line: run, circuit, state, duration, credits charged', async () => {
    const { circuit, run } = await runTo({
      query_schema: { type: 'object' },
      steps: [{ id: 'greet', kind: 'template', template: 'Hello {{input.name}}' }],
    });
    expect(run.state).toBe('COMPLETED');
    const ended = endedLines(run.uid);
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({
      level: 30,
      run: run.uid,
      circuit: circuit.uid,
      state: 'COMPLETED',
      credits_charged: 1,
      attempt: 1,
    });
    expect(ended[0].duration_ms).toEqual(expect.any(Number));
    expect(ended[0].duration_ms).toBeGreaterThanOrEqual(0);
    expect(ended[0]).not.toHaveProperty('error_code');
    // Nothing else about this run is logged at info or above, and no line carries its input.
    expect(lines.filter((line) => line.run === run.uid)).toHaveLength(1);
    expect(JSON.stringify(lines)).not.toContain(SECRET_INPUT);
  });

  test('a failed run logs the same single info line with its error code, and no failure message', async () => {
    const { circuit, run } = await runTo({
      query_schema: { type: 'object' },
      steps: [{ id: 'boom', kind: 'transform', expression: '$error("failed for " & input.name)' }],
    });
    expect(run.state).toBe('EXCEPTION');
    expect(run.error.message).toContain(SECRET_INPUT);
    const ended = endedLines(run.uid);
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({
      level: 30,
      run: run.uid,
      circuit: circuit.uid,
      state: 'EXCEPTION',
      error_code: 'StepFailed',
      credits_charged: 1,
    });
    expect(lines.filter((line) => line.run === run.uid)).toHaveLength(1);
    expect(JSON.stringify(lines)).not.toContain(SECRET_INPUT);
  });
});

describe('without a worker', () => {
  beforeAll(async () => {
    // No worker at all, so the run is still PROVISIONED when it is canceled and the cancel ends it.
    t = await startTestApp({ runWorker: false }, { log: pino({ level: 'info' }, sink) });
    owner = await makeUser({ credits: 50 });
  });
  afterAll(async () => {
    await t?.close();
  });

  test('a run canceled before any worker claimed it logs the line too, its circuit read from the row', async () => {
    const { circuit, adaptorUid } = await makeRunnableCircuit(owner, {
      query_schema: { type: 'object' },
      steps: [{ id: 'a', kind: 'template', template: 'x' }],
    });
    const submitted = await submitRun(t, owner.token, adaptorUid, { input: {} });
    const uid = submitted.body.payload.uid as string;
    expect((await t.rest('POST', `/circuit-runs/${uid}/cancel`, { token: owner.token })).status).toBe(200);
    const run = await waitForRun(t, uid, owner.token);
    expect(run.state).toBe('EXCEPTION');
    for (let i = 0; i < 100 && endedLines(uid).length === 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    const ended = endedLines(uid);
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({
      level: 30,
      run: uid,
      circuit: circuit.uid,
      state: 'EXCEPTION',
      error_code: 'Canceled',
      attempt: 0,
      duration_ms: expect.any(Number),
    });
  });
});
