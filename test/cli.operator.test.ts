import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HELLO_DEFINITION, makeUser, type TestUser } from './support/factories';
import { makeRunnableCircuit, readSse, submitRun, waitForRun } from './support/run-factories';
import { workerOnDemand } from './support/worker-on-demand';
import { assertBuilt, BIN, cliBin, cliInProcess, type CliResult } from './support/cli';
import type { CliDatabase } from '../src/cli/io';
import { CreditLedger } from '../src/models/CreditLedger';
import { TOKEN_SCOPES } from '../src/domain/token-scopes';

// The operator's daily commands against the test app's database. What each prints runs through the CLI's
// entry (runCli) in this process, on the app's database (its models are bound to it once per process);
// the built bin runs where a separate process is the point: the --help module probe, and a cancel that
// reaches a RUNNING run's worker over the bus (`npm test` builds first; run `npm run build` before running
// this file alone).
const ROOT = path.join(__dirname, '..');

jest.setTimeout(300_000);

const setup = workerOnDemand();
const { held, startWorker, holdDefinition, untilHeld } = setup;
let tmp: string;

function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: setup.t.databaseUrl,
    DATA_DIR: path.join(tmp, 'data'),
    LOG_LEVEL: 'silent',
    ...extra,
  };
}

/** The app's own database and configuration, as a command run by the bin against it would open them. */
const appDatabase: CliDatabase = (fn) =>
  fn({
    config: setup.t.app.services.config,
    sequelize: setup.t.app.services.sequelize,
    databaseUrl: setup.t.databaseUrl,
    applied: [],
  });

const cli = (args: string[]): Promise<CliResult> => cliInProcess(args, childEnv(), appDatabase);
const bin = (args: string[]): Promise<CliResult> => cliBin(args, childEnv());

async function ok(args: string[], run = cli): Promise<CliResult> {
  const result = await run(args);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return result;
}

function expectOneLineError(result: CliResult, pattern: RegExp) {
  expect(result.code).not.toBe(0);
  expect(result.stdout).toBe('');
  const lines = result.stderr.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
}

/** Every module file the CLI process had loaded when it exited, running `args` through the real bin. */
function modulesLoadedBy(args: string[]): Promise<{ code: number; modules: string[] }> {
  const script = `
    process.argv = [process.execPath, ${JSON.stringify(BIN)}, ...${JSON.stringify(args)}];
    process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(path.join(tmp, 'modules.json'))}, JSON.stringify(Object.keys(require.cache))));
    require(${JSON.stringify(BIN)});`;
  return new Promise((resolve) => {
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...childEnv() };
    execFile(process.execPath, ['-e', script], { cwd: ROOT, env, timeout: 60_000 }, (error) => {
      resolve({
        code: error ? Number((error as { code?: number }).code ?? 1) : 0,
        modules: JSON.parse(fs.readFileSync(path.join(tmp, 'modules.json'), 'utf8')) as string[],
      });
    });
  });
}

const HEAVY = [
  /[\\/]node_modules[\\/]sequelize[\\/]/,
  /[\\/]node_modules[\\/]type-graphql[\\/]/,
  /[\\/]node_modules[\\/]graphql[\\/]/,
  /[\\/]node_modules[\\/]pg[\\/]/,
  /[\\/]dist[\\/]src[\\/](models|queue|graphql|runs|services)[\\/.]/,
];

let alice: TestUser;
let bob: TestUser;
let aliceCircuit: { uid: string; name: string; adaptorUid: string };

beforeAll(async () => {
  assertBuilt();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'circuits-cli-operator-'));
  alice = await makeUser({ username: 'op-alice', credits: 50 });
  bob = await makeUser({ username: 'op-bob', credits: 20, isAdmin: true });
  const made = await makeRunnableCircuit(alice, HELLO_DEFINITION, { name: 'greeter', isPrivate: true });
  aliceCircuit = { uid: made.circuit.uid, name: made.circuit.name, adaptorUid: made.adaptorUid };
  await makeRunnableCircuit(bob, HELLO_DEFINITION, { name: 'bobs' });
});
afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('--help and <command> --help load no database, ORM, GraphQL or queue module; a command that needs them does', async () => {
  for (const args of [
    ['--help'],
    ['run', 'list', '--help'],
    ['user', '--help'],
    ['schedule', 'list', '--help'],
    ['worker', '--help'],
  ]) {
    const { code, modules } = await modulesLoadedBy(args);
    expect(code).toBe(0);
    expect(modules.filter((file) => HEAVY.some((pattern) => pattern.test(file)))).toEqual([]);
  }
  // The check can see them: the same probe on a command that reads the database finds them.
  const { code, modules } = await modulesLoadedBy(['user', 'list']);
  expect(code).toBe(0);
  expect(modules.some((file) => HEAVY[0].test(file))).toBe(true);
  expect(modules.some((file) => /[\\/]dist[\\/]src[\\/]models[\\/]/.test(file))).toBe(true);
});

test('--help lists the operator commands, each with its own --help', async () => {
  const help = await ok(['--help']);
  for (const noun of ['user', 'token', 'credits', 'circuit', 'run', 'schedule']) expect(help.stdout).toContain(noun);
  expect((await ok(['user', '--help'])).stdout).toMatch(/list[^]*show/);
  expect((await ok(['run', '--help'])).stdout).toMatch(/list[^]*show[^]*cancel/);
  const runList = await ok(['run', 'list', '--help']);
  for (const option of ['--username', '--state', '--circuit', '--limit', '--page', '--table'])
    expect(runList.stdout).toContain(option);
});

test('user list pages users oldest first with balances and no secrets; --search, --admin and --table filter and format', async () => {
  const all = await ok(['user', 'list']);
  expect(all.json.meta).toEqual({ total_count: expect.any(Number), limit: 50, page: 1 });
  const names = all.json.data.map((u: any) => u.username);
  expect(names).toEqual(expect.arrayContaining(['op-alice', 'op-bob']));
  const shown = all.json.data.find((u: any) => u.username === 'op-alice');
  expect(shown).toEqual({
    uid: alice.user.uid,
    username: 'op-alice',
    name: expect.any(String),
    bio: expect.any(String),
    is_admin: false,
    is_private: false,
    has_password: false,
    credits: 50,
    credits_held: 0,
    available: 50,
    created_at: expect.any(String),
    updated_at: expect.any(String),
  });
  expect(all.stdout).not.toContain(alice.token);
  expect(all.stdout).not.toMatch(/password_hash|token_hash/);

  expect((await ok(['user', 'list', '--search', 'OP-A'])).json.data.map((u: any) => u.username)).toEqual(['op-alice']);
  expect((await ok(['user', 'list', '--search', '%'])).json.data).toEqual([]);
  expect((await ok(['user', 'list', '--admin'])).json.data.map((u: any) => u.username)).toEqual(['op-bob']);
  const page = await ok(['user', 'list', '--limit', '1', '--page', '2']);
  expect(page.json.data).toHaveLength(1);
  expect(page.json.data[0].username).toBe(names[1]);

  const table = await ok(['user', 'list', '--search', 'op-', '--table']);
  const lines = table.stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^USERNAME\s+UID\s+IS_ADMIN\s+CREDITS\s+CREDITS_HELD\s+CREATED_AT$/);
  expect(lines.slice(1).map((line) => line.split(/\s+/)[0])).toEqual(['op-alice', 'op-bob']);

  expectOneLineError(await cli(['user', 'list', '--limit', '1001']), /--limit must be at most 1000/);
  expectOneLineError(await cli(['user', 'list', '--limit', '0']), /--limit/);
  expectOneLineError(await cli(['user', 'list', '--page', '9007199254740991']), /--page is too large/);
});

test('user show prints the profile, balance and counts of circuits, runs by state, schedules, tokens and blobs', async () => {
  const carol = await makeUser({ username: 'op-carol', credits: 7 });
  await makeRunnableCircuit(carol, HELLO_DEFINITION, { name: 'one' });
  const shown = await ok(['user', 'show', '--username', 'op-carol']);
  expect(shown.json).toMatchObject({ username: 'op-carol', credits: 7, available: 7, is_admin: false });
  expect(shown.json.counts).toEqual({
    circuits: 1,
    runs: { PROVISIONED: 0, RUNNING: 0, COMPLETED: 0, EXCEPTION: 0 },
    schedules: 0,
    active_tokens: 1,
    blobs: 0,
  });
  expect(shown.stdout).not.toContain(carol.token);
  expectOneLineError(await cli(['user', 'show', '--username', 'ghost']), /^User ghost not found$/);
  expectOneLineError(await cli(['user', 'show']), /required option '--username/);
});

test('circuit list shows every circuit (private too) in the REST shape, filtered by --user', async () => {
  const all = await ok(['circuit', 'list']);
  expect(all.json.data.map((c: any) => `${c.username}/${c.name}`)).toEqual(
    expect.arrayContaining(['op-alice/greeter', 'op-bob/bobs']),
  );
  const mine = await ok(['circuit', 'list', '--username', 'op-alice']);
  expect(mine.json.meta).toEqual({ total_count: 1, limit: 50, page: 1 });
  expect(mine.json.data).toEqual([
    {
      uid: aliceCircuit.uid,
      name: 'greeter',
      description: expect.any(String),
      username: 'op-alice',
      is_private: true,
      is_protected: false,
      license_type: null,
      user_circuit_metric_uid: null,
      is_deprecated: false,
      star_count: 0,
      adaptor_uid: aliceCircuit.adaptorUid,
      primary_version_uid: expect.any(String),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    },
  ]);
  const table = await ok(['circuit', 'list', '--username', 'op-alice', '--table']);
  expect(table.stdout).toMatch(/^USERNAME\s+NAME\s+UID/);
  expect(table.stdout).toContain(aliceCircuit.uid);
  expectOneLineError(await cli(['circuit', 'list', '--username', 'ghost']), /^User ghost not found$/);
  expect((await ok(['circuit', 'list', '--user', 'op-alice'])).json).toEqual(mine.json);
});

test('token list shows a user’s tokens without the token or its hash', async () => {
  const listed = await ok(['token', 'list', '--username', 'op-alice']);
  // As GET /users/tokens lists it: a token made without scopes has every scope.
  expect(listed.json).toEqual([
    {
      uid: expect.any(String),
      label: 'test',
      created_at: expect.any(String),
      last_used_at: null,
      scopes: [...TOKEN_SCOPES],
      expires_at: null,
      circuit_uids: null,
      max_credits_per_day: null,
      credits_spent_today: 0,
    },
  ]);
  expect(listed.stdout).not.toContain(alice.token);
  expect(listed.stdout).not.toMatch(/hash|cst_/);
});

const chargesOf = async (uid: string) =>
  (await CreditLedger.findAll({ where: { run_uid: uid } })).map((row) => Number(row.amount));

describe('runs', () => {
  let provisioned: string;
  let running: string;
  let completed: string;

  test('run cancel ends a PROVISIONED run EXCEPTION Canceled through the service’s cancel, charging the base credit once', async () => {
    const { body } = await submitRun(setup.t, alice.token, aliceCircuit.adaptorUid, { input: { name: 'p' } });
    provisioned = body.payload.uid;
    const canceled = await ok(['run', 'cancel', '--uid', provisioned]);
    expect(canceled.json).toMatchObject({
      uid: provisioned,
      state: 'EXCEPTION',
      error: { code: 'Canceled' },
      username: 'op-alice',
      credits_cost: 1,
    });
    expect(await chargesOf(provisioned)).toEqual([-1]);
    expect((await ok(['user', 'show', '--username', 'op-alice'])).json).toMatchObject({
      credits: 49,
      credits_held: 0,
      available: 49,
    });
    const viaRest = await setup.t.rest('GET', `/circuit-runs/${provisioned}`, { token: alice.token });
    expect(viaRest.body.payload).toMatchObject({ state: 'EXCEPTION', error: { code: 'Canceled' } });
    // Cancelling an ended run changes nothing and says what it is.
    const again = await ok(['run', 'cancel', '--uid', provisioned]);
    expect(again.json).toMatchObject({ uid: provisioned, state: 'EXCEPTION', error: { code: 'Canceled' } });
    expect(await chargesOf(provisioned)).toEqual([-1]);
    expectOneLineError(
      await cli(['run', 'cancel', '--uid', '00000000-0000-4000-8000-000000000000']),
      /^Circuit run .* not found$/,
    );
    expectOneLineError(await cli(['run', 'cancel', '--uid', 'nope']), /not found/);
    expectOneLineError(await cli(['run', 'cancel']), /required option '--uid/);
  });

  test('run cancel (bin) tells the worker of a RUNNING run (another process) over the bus; it aborts the step and the events show it', async () => {
    await startWorker();
    const { adaptorUid } = await makeRunnableCircuit(bob, holdDefinition(), { name: 'holder' });
    const before = held.length;
    const { body } = await submitRun(setup.t, bob.token, adaptorUid, { input: {} });
    running = body.payload.uid;
    await untilHeld(before + 1);
    // In flight, the run holds its base credit; once ended (below) it holds nothing, whatever it reserved.
    expect((await ok(['run', 'show', '--uid', running])).json).toMatchObject({
      state: 'RUNNING',
      credits_held: 1,
      credits_cost: null,
    });
    // The bin: a process of its own, as an operator's, reaches the worker only through the bus.
    const canceled = await ok(['run', 'cancel', '--uid', running], bin);
    expect(canceled.json).toMatchObject({
      uid: running,
      state: 'EXCEPTION',
      error: { code: 'Canceled' },
      username: 'op-bob',
    });
    expect(held[before].destroyed || held[before].writableEnded || held[before].req.destroyed).toBe(true);
    expect(await chargesOf(running)).toEqual([-1]);
    const events = await readSse(`${setup.t.url}/api/v1/circuit-runs/${running}/events`, {
      token: bob.token,
      headers: { 'last-event-id': '0' },
    });
    expect(events.events.map((e) => JSON.parse(e.data!).state)).toEqual(['PROVISIONED', 'RUNNING', 'EXCEPTION']);

    const done = await submitRun(setup.t, alice.token, aliceCircuit.adaptorUid, { input: { name: 'c' } });
    completed = done.body.payload.uid;
    expect((await waitForRun(setup.t, completed, alice.token)).state).toBe('COMPLETED');
    const untouched = await ok(['run', 'cancel', '--uid', completed]);
    expect(untouched.json).toMatchObject({ uid: completed, state: 'COMPLETED' });
    for (const uid of [completed, running, provisioned])
      expect((await ok(['run', 'show', '--uid', uid])).json).toMatchObject({ uid, credits_held: 0, credits_cost: 1 });
  });

  test('run list pages every user’s runs newest first; --username, --state, --circuit and --limit combine', async () => {
    const all = await ok(['run', 'list']);
    expect(all.json.meta).toEqual({ total_count: 3, limit: 20, page: 1 });
    expect(all.json.data.map((r: any) => r.uid)).toEqual([completed, running, provisioned]);
    expect(all.json.data[0]).toMatchObject({
      uid: completed,
      state: 'COMPLETED',
      username: 'op-alice',
      document_type: 'circuit_run',
      credits_cost: expect.any(Number),
    });

    const uids = async (...args: string[]) => (await ok(['run', 'list', ...args])).json.data.map((r: any) => r.uid);
    // Read-only, so side by side.
    expect(
      await Promise.all([
        uids('--username', 'op-alice'),
        uids('--state', 'exception'),
        uids('--username', 'op-alice', '--state', 'EXCEPTION'),
        uids('--circuit', aliceCircuit.uid),
        uids('--circuit', 'op-alice/greeter', '--state', 'COMPLETED'),
        // --user: the hidden alias of --username.
        uids('--user', 'op-bob', '--circuit', 'holder'),
        uids('--limit', '1', '--page', '2'),
        uids('--state', 'RUNNING'),
      ]),
    ).toEqual([
      [completed, provisioned],
      [running, provisioned],
      [provisioned],
      [completed, provisioned],
      [completed],
      [running],
      [running],
      [],
    ]);

    const table = await ok(['run', 'list', '--username', 'op-bob', '--table']);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^UID\s+USERNAME\s+STATE\s+CIRCUIT_UID\s+CREATED_AT\s+ENDED_AT\s+CREDITS_COST\s+FAILURE_REASON$/,
    );
    expect(lines[1]).toMatch(new RegExp(`^${running}\\s+op-bob\\s+EXCEPTION\\s`));

    const refused: Array<[string[], RegExp]> = [
      [['--state', 'DONE'], /--state must be one of PROVISIONED, RUNNING, COMPLETED, EXCEPTION/],
      [['--circuit', 'greeter'], /--circuit must be a circuit uid or owner\/name/],
      [['--circuit', 'op-alice/none'], /^Circuit op-alice\/none not found$/],
      [['--circuit', '00000000-0000-4000-8000-000000000000'], /not found/],
      [['--username', 'ghost'], /^User ghost not found$/],
      [['--limit', '5000'], /--limit must be at most 1000/],
    ];
    const results = await Promise.all(refused.map(([args]) => cli(['run', 'list', ...args])));
    results.forEach((result, i) => expectOneLineError(result, refused[i][1]));

    const shown = await ok(['user', 'show', '--username', 'op-alice']);
    expect(shown.json.counts.runs).toEqual({ PROVISIONED: 0, RUNNING: 0, COMPLETED: 1, EXCEPTION: 1 });
  });
});

test('schedule list shows every user’s schedules with next fire and owner; --username, --circuit, --paused/--active and --table', async () => {
  const create = (token: string, circuit: string, body: unknown) =>
    setup.t.rest('POST', `/circuits/${circuit}/schedules`, { token, body });
  const first = await create(alice.token, aliceCircuit.uid, {
    cron: '0 0 9 * * 1-5',
    timezone: 'Europe/Paris',
    input: { name: 'Ada' },
  });
  expect(first.status).toBe(200);
  const second = await create(alice.token, aliceCircuit.uid, { cron: '30 6 * * *', input: { name: 'Bo' } });
  expect(second.status).toBe(200);
  expect(
    (
      await setup.t.rest('PUT', `/schedules/${second.body.payload.uid}`, {
        token: alice.token,
        body: { is_paused: true },
      })
    ).status,
  ).toBe(200);

  const listed = await ok(['schedule', 'list']);
  expect(listed.json.meta).toEqual({ total_count: 2, limit: 50, page: 1 });
  // The API's own shape (as GET /schedules/{uid} answers its owner), plus whose it is and when it last fired.
  expect(listed.json.data[0]).toEqual({
    ...first.body.payload,
    next_run_at: expect.any(String),
    username: 'op-alice',
    circuit_name: 'greeter',
    last_fired_at: null,
  });
  expect(listed.json.data[1]).toMatchObject({ uid: second.body.payload.uid, is_paused: true, next_run_at: null });

  const uids = async (...args: string[]) => (await ok(['schedule', 'list', ...args])).json.data.map((s: any) => s.uid);
  expect(await uids('--username', 'op-alice')).toEqual([first.body.payload.uid, second.body.payload.uid]);
  expect(await uids('--username', 'op-bob')).toEqual([]);
  expect(await uids('--user', 'op-alice')).toEqual(await uids('--username', 'op-alice'));
  expect(await uids('--circuit', 'op-alice/greeter', '--paused')).toEqual([second.body.payload.uid]);
  expect(await uids('--active')).toEqual([first.body.payload.uid]);
  expect(await uids('--limit', '1', '--page', '2')).toEqual([second.body.payload.uid]);

  const table = await ok(['schedule', 'list', '--table']);
  const lines = table.stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(
    /^UID\s+USERNAME\s+CIRCUIT_NAME\s+CRON\s+TIMEZONE\s+IS_PAUSED\s+NEXT_RUN_AT\s+LAST_FIRED_AT\s+LAST_ERROR$/,
  );
  expect(lines[1]).toContain('0 0 9 * * 1-5');

  expectOneLineError(
    await cli(['schedule', 'list', '--paused', '--active']),
    /--paused and --active exclude each other/,
  );
  expectOneLineError(await cli(['schedule', 'list', '--username', 'ghost']), /^User ghost not found$/);
});

test('credits grant and show work beside the new commands (the ledger row shows in user show’s balance)', async () => {
  await ok(['credits', 'grant', '--username', 'op-bob', '--amount', '5']);
  const shown = await ok(['credits', 'show', '--username', 'op-bob', '--ledger', '1']);
  expect(shown.json).toMatchObject({ username: 'op-bob', ledger: [{ kind: 'grant', amount: 5 }] });
  expect((await ok(['user', 'show', '--username', 'op-bob'])).json.credits).toBe(shown.json.credits);
});

test('the CLI prints tokens, users and circuits through the presenters REST uses: the same fields, the same values', async () => {
  // REST first: its request is the token's latest use, which both then show.
  const restTokens = await setup.t.rest('GET', '/users/tokens?limit=100', { token: alice.token });
  expect((await ok(['token', 'list', '--username', 'op-alice'])).json).toEqual(restTokens.body.data);

  const me = await setup.t.rest('GET', '/users/me', { token: alice.token });
  expect((await ok(['user', 'show', '--username', 'op-alice'])).json).toMatchObject(me.body.payload);

  const restCircuit = await setup.t.rest('GET', `/circuits/${aliceCircuit.uid}`, { token: alice.token });
  const listed = (await ok(['circuit', 'list', '--username', 'op-alice', '--limit', '100'])).json.data;
  expect(listed.find((circuit: { uid: string }) => circuit.uid === aliceCircuit.uid)).toEqual(restCircuit.body.payload);
});
