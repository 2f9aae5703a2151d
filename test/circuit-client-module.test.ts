import { Worker } from 'node:worker_threads';
import ts from 'typescript';
import { startTestApp, TestApp } from './support/app';
import { makeUser, TestUser } from './support/factories';
import { makeRunnableCircuit, submitRun } from './support/run-factories';

/** GET /circuits/{uid}/client.ts, a dependency-free typed module per circuit version. */
let t: TestApp;
let owner: TestUser;
let other: TestUser;
let circuitUid: string;
let v1: string;
let v2: string;

const QUERY_SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string' }, times: { type: 'integer', minimum: 1 }, tone: { enum: ['plain', 'loud'] } },
  required: ['name', 'times'],
  additionalProperties: false,
};
const OUTPUT_SCHEMA = {
  type: 'object',
  properties: { greeting: { type: 'string' }, count: { type: 'number' } },
  required: ['greeting', 'count'],
};

beforeAll(async () => {
  t = await startTestApp();
  owner = await makeUser();
  other = await makeUser();
  const created = await t.rest('POST', '/circuits', {
    token: owner.token,
    body: { name: `mod-${Date.now()}`, is_private: true },
  });
  circuitUid = created.body.payload.uid;
  const publish = (extra: Record<string, unknown>) =>
    t.rest('POST', `/circuits/${circuitUid}/versions`, {
      token: owner.token,
      body: {
        query_schema: QUERY_SCHEMA,
        steps: [{ id: 'g', kind: 'transform', expression: '{"greeting": "hi " & input.name, "count": input.times}' }],
        output: 'steps.g.output',
        ...extra,
      },
    });
  v1 = (await publish({ output_schema: OUTPUT_SCHEMA })).body.payload.uid;
  v2 = (await publish({ query_schema: { type: 'object', properties: { other: { type: 'boolean' } } } })).body.payload
    .uid;
  expect(v1 && v2).toBeTruthy();
});
afterAll(async () => {
  await t?.close();
});

/**
 * Type-checks the module and consumer files in one program under --strict; each file's diagnostics, formatted.
 * In a worker thread: the check takes seconds, and a blocked event loop would stall this process's service too
 * (its idle keep-alive connections then closed by overdue timers just as the next fetch reuses one: ECONNRESET).
 */
const COMPILE_PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
const ts = require(workerData.typescript);
const { moduleSource, consumers } = workerData;
const files = { '/m/circuit.ts': moduleSource };
for (const [name, source] of Object.entries(consumers)) files['/m/' + name + '.ts'] = source;
const options = { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022, moduleResolution: ts.ModuleResolutionKind.Bundler, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'], types: [] };
const host = ts.createCompilerHost(options);
const read = host.getSourceFile.bind(host);
host.getSourceFile = (name, version, onError) => (files[name] !== undefined ? ts.createSourceFile(name, files[name], version) : read(name, version, onError));
host.fileExists = (name) => files[name] !== undefined || ts.sys.fileExists(name);
host.readFile = (name) => files[name] ?? ts.sys.readFile(name);
host.directoryExists = (name) => name === '/m' || ts.sys.directoryExists(name);
const program = ts.createProgram(Object.keys(files), options, host);
const out = Object.fromEntries(['circuit', ...Object.keys(consumers)].map((name) => [name, '']));
for (const d of ts.getPreEmitDiagnostics(program)) {
  const name = d.file ? d.file.fileName.replace(/^\\/m\\/|\\.ts$/g, '') : 'global';
  out[name] = (out[name] ?? '') + ts.flattenDiagnosticMessageText(d.messageText, ' ') + '\\n';
}
parentPort.postMessage(out);
`;

function compile(moduleSource: string, consumers: Record<string, string>): Promise<Record<string, string>> {
  const worker = new Worker(COMPILE_PROGRAM, {
    eval: true,
    workerData: { typescript: require.resolve('typescript'), moduleSource, consumers },
  });
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

async function moduleText(query = '', token: string | null = owner.token) {
  const res = await fetch(`${t.url}/api/v1/circuits/${circuitUid}/client.ts${query}`, {
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

test('answers a TypeScript module with the same read rules as the circuit', async () => {
  const res = await moduleText(`?version=${v1}`);
  expect(res.status).toBe(200);
  expect(res.type).toMatch(/^application\/typescript/);
  expect(res.text).toContain('export async function run(input: Input');
  expect(res.text).not.toMatch(/^import /m);
  expect((await moduleText('', other.token)).status).toBe(403);
  expect((await moduleText('', null)).status).toBe(401);
  expect((await moduleText(`?version=${v1}&alias=live`)).status).toBe(400);
  expect((await moduleText('?alias=nope')).status).toBe(404);
  expect((await moduleText('?version=00000000-0000-4000-8000-000000000000')).status).toBe(404);
  // The primary version (v1, the first) is the default.
  expect((await moduleText()).text).toContain(`VERSION_UID = "${v1}"`);
  expect((await moduleText(`?version=${v2}`)).text).toContain('other?: boolean');
});

test('compiles under --strict; a consumer passing a wrong input gets a diagnostic', async () => {
  const { text } = await moduleText(`?version=${v1}`);
  const good = `import { run, waitFor, events, type Output } from './circuit';
export async function go(): Promise<number> {
  const started = await run({ name: 'Ada', times: 2, tone: 'loud' }, { token: 't' });
  const done = await waitFor(started.uid);
  for await (const event of events(started.uid, { kinds: ['state', 'step'] })) void event.data;
  const output: Output | undefined = done.result_blob?.output;
  return output ? output.count : 0;
}`;
  const call = (input: string) => `import { run } from './circuit';\nvoid run(${input});\n`;
  const diagnostics = await compile(text, {
    good,
    wrongType: call("{ name: 'Ada', times: 'two' }"),
    missing: call("{ name: 'Ada' }"),
    extra: call("{ name: 'Ada', times: 1, color: 'red' }"),
    badEnum: call("{ name: 'Ada', times: 1, tone: 'quiet' }"),
  });
  expect(diagnostics.circuit).toBe('');
  expect(diagnostics.good).toBe('');
  expect(diagnostics.wrongType).toMatch(/'string' is not assignable to type 'number'/);
  expect(diagnostics.missing).toMatch(/Property 'times' is missing/);
  expect(diagnostics.extra).toMatch(/'color' does not exist in type 'Input'/);
  expect(diagnostics.badEnum).toMatch(/"quiet"|'quiet'/);
});

test('runs a real circuit through the module: run, waitFor and events', async () => {
  const { text } = await moduleText(`?version=${v1}`);
  const js = ts.transpileModule(text, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const exports: Record<string, any> = {};
  new Function('exports', 'require', js)(exports, require);
  const options = { baseUrl: `${t.url}/api/v1`, token: owner.token };
  const started = await exports.run({ name: 'Ada', times: 3 }, options);
  expect(started.uid).toBeTruthy();
  const seen: string[] = [];
  for await (const event of exports.events(started.uid, options)) seen.push(`${event.event}:${event.data.state}`);
  expect(seen[seen.length - 1]).toBe('state:COMPLETED');
  const done = await exports.waitFor(started.uid, options);
  expect(done.state).toBe('COMPLETED');
  expect(done.circuit_version_uid).toBe(v1);
  expect(done.result_blob.output).toEqual({ greeting: 'hi Ada', count: 3 });
  await expect(exports.run({ name: 'Ada', times: 0 }, options)).rejects.toMatchObject({
    status: 400,
    code: 'BadClientData',
  });
});

test('waitFor waits with Prefer: wait in one request while the run waits, never polling; types say null where the payload has it', async () => {
  const waiting = await makeRunnableCircuit(owner, {
    query_schema: { type: 'object' },
    steps: [{ id: 'reply', kind: 'wait', for: 'signal' }],
  });
  const { text } = await moduleText(`?version=${v1}`);
  expect(text).toContain('step_id: string | null');
  expect(text).toMatch(/export type ApiErrorCode = "BadClientData" \| /);
  expect(text).toMatch(/export type RunErrorCode = "StepFailed" \| /);
  expect(text).not.toContain('setTimeout');
  const js = ts.transpileModule(text, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const exports: Record<string, any> = {};
  // The module's fetch, counted: every request it makes, with its Prefer header.
  const requests: { url: string; prefer: string | null }[] = [];
  let sent: () => void = () => {};
  const firstSent = new Promise<void>((resolve) => (sent = resolve));
  const countingFetch = (url: string, init: RequestInit) => {
    requests.push({ url, prefer: new Headers(init.headers).get('prefer') });
    sent();
    return fetch(url, init);
  };
  new Function('exports', 'require', 'fetch', js)(exports, require, countingFetch);
  const { body } = await submitRun(t, owner.token, waiting.adaptorUid, { input: {} });
  const uid = body.payload.uid as string;
  const done = exports.waitFor(uid, { baseUrl: `${t.url}/api/v1`, token: owner.token });
  await firstSent;
  // The run waits for its signal until it is sent: the one request in flight holds on the server meanwhile.
  for (;;) {
    const signal = await t.rest('POST', `/circuit-runs/${uid}/signals/reply`, {
      token: owner.token,
      body: { data: 1 },
    });
    if (signal.status === 200 || signal.status === 202) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect((await done).state).toBe('COMPLETED');
  expect(requests).toEqual([{ url: `${t.url}/api/v1/circuit-runs/${uid}`, prefer: 'wait=60' }]);
  // The server side: a GET with Prefer: wait says so; an ended run answers at once.
  const direct = await t.rest('GET', `/circuit-runs/${uid}`, { token: owner.token, headers: { prefer: 'wait=5' } });
  expect(direct.headers.get('preference-applied')).toBe('wait=5');
  expect(direct.body.payload.state).toBe('COMPLETED');
});
