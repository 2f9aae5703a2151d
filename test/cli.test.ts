import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, databaseUrl } from './support/database';
import { HELLO_DEFINITION } from './support/factories';
import { assertBuilt, BIN, cliBin, cliInProcess, type CliResult } from './support/cli';

// What each command does and prints runs through the CLI's own entry (runCli) in this process; the built
// bin itself (`node bin/circuits.js`: exit codes, a whole process's stdout and stderr, --help, --version,
// commands from separate processes at once, the worker until SIGINT) in the tests that say `bin`.
// `npm test` builds first; run `npm run build` before running this file alone.
const ROOT = path.join(__dirname, '..');

jest.setTimeout(120_000);

let dbUrl: string;
let drop: () => Promise<void>;
let tmp: string;

const env = (extra: Record<string, string> = {}): Record<string, string> => ({
  DATABASE_URL: dbUrl,
  DATA_DIR: path.join(tmp, 'data'),
  LOG_LEVEL: 'silent',
  ...extra,
});
const cli = (args: string[], extra: Record<string, string> = {}) => cliInProcess(args, env(extra));
const bin = (args: string[], extra: Record<string, string> = {}) => cliBin(args, env(extra));

function expectOneLineError(result: CliResult, pattern: RegExp) {
  expect(result.code).not.toBe(0);
  expect(result.stdout).toBe('');
  const lines = result.stderr.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
}

beforeAll(async () => {
  assertBuilt();
  const db = await createTestDatabase();
  dbUrl = db.url;
  drop = db.drop;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'circuits-cli-'));
});
afterAll(async () => {
  await drop?.();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('user create prints uid, username and a working token, and rejects a duplicate username on one line (bin)', async () => {
  const created = await bin([
    'user',
    'create',
    '--username',
    'alice',
    '--password',
    'correct horse',
    '--name',
    'Alice',
    '--bio',
    'hi',
    '--credits',
    '25',
  ]);
  expect(created.stderr).toBe('');
  expect(created.code).toBe(0);
  expect(Object.keys(created.json).sort()).toEqual(['token', 'uid', 'username']);
  expect(created.json).toMatchObject({
    username: 'alice',
    token: expect.stringMatching(/^cst_/),
    uid: expect.stringMatching(/^[0-9a-f-]{36}$/),
  });

  const db = new Client({ connectionString: dbUrl });
  await db.connect();
  try {
    const { rows } = await db.query(
      'SELECT u.name, u.bio, u.credits, u.is_admin, u.is_private, t.label FROM users u JOIN api_tokens t ON t.user_uid = u.uid WHERE u.username = $1',
      ['alice'],
    );
    expect(rows).toEqual([
      { name: 'Alice', bio: 'hi', credits: '25', is_admin: false, is_private: false, label: 'cli' },
    ]);
  } finally {
    await db.end();
  }

  expectOneLineError(await bin(['user', 'create', '--username', 'alice']), /username alice is taken/);
  expectOneLineError(await cli(['user', 'create', '--username', 'Bad Name']), /username must be/);
  expectOneLineError(await cli(['user', 'create', '--username', 'bob', '--credits', 'lots']), /--credits/);
  expectOneLineError(await cli(['user', 'create']), /required option '--username/);
});

test('user create --admin --private sets the flags', async () => {
  const created = await cli(['user', 'create', '--username', 'root-admin', '--admin', '--private']);
  expect(created.code).toBe(0);
  const db = new Client({ connectionString: dbUrl });
  await db.connect();
  try {
    const { rows } = await db.query('SELECT is_admin, is_private FROM users WHERE username = $1', ['root-admin']);
    expect(rows).toEqual([{ is_admin: true, is_private: true }]);
  } finally {
    await db.end();
  }
});

test('token create prints a new token for an existing user and fails for an unknown user', async () => {
  await cli(['user', 'create', '--username', 'tokenuser']);
  const first = await cli(['token', 'create', '--username', 'tokenuser', '--label', 'laptop']);
  expect(first.code).toBe(0);
  expect(first.json).toEqual({ token: expect.stringMatching(/^cst_/) });
  const second = await cli(['token', 'create', '--username', 'tokenuser']);
  expect(second.json.token).not.toBe(first.json.token);

  expectOneLineError(await cli(['token', 'create', '--username', 'nobody']), /^User nobody not found$/);
});

test('credits grant adds to the balance and accepts only positive whole amounts', async () => {
  await cli(['user', 'create', '--username', 'payee', '--credits', '5']);
  const granted = await cli(['credits', 'grant', '--username', 'payee', '--amount', '10']);
  expect(granted.code).toBe(0);
  expect(granted.json).toEqual({ username: 'payee', credits: 15 });

  // Concurrent grants, each its own process (bin), never lose an update.
  const results = await Promise.all(
    [1, 2, 3].map(() => bin(['credits', 'grant', '--username', 'payee', '--amount', '1'])),
  );
  expect(results.every((r) => r.code === 0)).toBe(true);
  expect((await cli(['credits', 'grant', '--username', 'payee', '--amount', '2'])).json.credits).toBe(20);

  expectOneLineError(await cli(['credits', 'grant', '--username', 'payee', '--amount', '0']), /--amount/);
  expectOneLineError(
    await cli(['credits', 'grant', '--username', 'payee', '--amount', '-3']),
    /--amount|unknown option/,
  );
  expectOneLineError(await cli(['credits', 'grant', '--username', 'payee', '--amount', '1.5']), /--amount/);
  expectOneLineError(await cli(['credits', 'grant', '--username', 'ghost', '--amount', '1']), /^User ghost not found$/);
});

test('credits grant and user create --credits are ledger rows; credits show prints balance, held credits and the ledger', async () => {
  await cli(['user', 'create', '--username', 'ledgered', '--credits', '3']);
  await cli(['credits', 'grant', '--username', 'ledgered', '--amount', '4']);
  const shown = await cli(['credits', 'show', '--username', 'ledgered']);
  expect(shown.stderr).toBe('');
  expect(shown.json).toMatchObject({ username: 'ledgered', credits: 7, credits_held: 0, available: 7 });
  expect(shown.json.ledger.map((row: any) => [row.kind, row.amount, row.balance_after])).toEqual([
    ['grant', 4, 7],
    ['grant', 3, 3],
  ]);
  expect((await cli(['credits', 'show', '--username', 'ledgered', '--ledger', '1'])).json.ledger).toHaveLength(1);
  expectOneLineError(
    await cli(['credits', 'grant', '--username', 'ledgered', '--amount', '1000000000']),
    /at most 1000000000 credits/,
  );
  expectOneLineError(await cli(['credits', 'show', '--username', 'ghost']), /^User ghost not found$/);
  expectOneLineError(await cli(['credits', 'show']), /required option '--username/);
});

test('user set-password lets a user created without one sign in, and rejects short passwords', async () => {
  await cli(['user', 'create', '--username', 'late-pw']);
  const set = await cli(['user', 'set-password', '--username', 'late-pw', '--password', 'a long password']);
  expect(set.stderr).toBe('');
  expect(set.json).toEqual({ username: 'late-pw', password_set: true });
  const db = new Client({ connectionString: dbUrl });
  await db.connect();
  try {
    const { rows } = await db.query('SELECT password_hash FROM users WHERE username = $1', ['late-pw']);
    expect(rows[0].password_hash).toEqual(expect.any(String));
  } finally {
    await db.end();
  }
  expectOneLineError(
    await cli(['user', 'set-password', '--username', 'late-pw', '--password', 'short']),
    /at least 8 characters/,
  );
  expectOneLineError(
    await cli(['user', 'set-password', '--username', 'ghost', '--password', 'long enough']),
    /^User ghost not found$/,
  );
  expectOneLineError(await cli(['user', 'set-password', '--username', 'late-pw']), /required option '--password/);
});

test('token create --scope … --expires-in 30d --circuit UID --max-credits-per-day N makes a limited token; a bad limit is one line', async () => {
  await cli(['user', 'create', '--username', 'limited-cli']);
  const circuitUid = '00000000-0000-4000-8000-000000000001';
  const made = await cli([
    'token',
    'create',
    '--username',
    'limited-cli',
    '--scope',
    'runs:read',
    '--scope',
    'runs:write',
    '--expires-in',
    '30d',
    '--circuit',
    circuitUid,
    '--max-credits-per-day',
    '50',
  ]);
  expect(made.json).toMatchObject({
    token: expect.stringMatching(/^cst_/),
    scopes: ['runs:read', 'runs:write'],
    circuit_uids: [circuitUid],
    max_credits_per_day: 50,
  });
  const days = (Date.parse(made.json.expires_at) - Date.now()) / 86_400_000;
  expect(days).toBeGreaterThan(29.9);
  expect(days).toBeLessThanOrEqual(30);
  const listed = await cli(['token', 'list', '--username', 'limited-cli']);
  expect(listed.json.find((t: any) => t.uid === made.json.uid)).toMatchObject({
    scopes: ['runs:read', 'runs:write'],
    max_credits_per_day: 50,
  });
  expectOneLineError(
    await cli(['token', 'create', '--username', 'limited-cli', '--scope', 'everything']),
    /scopes: unknown scope "everything"/,
  );
  expectOneLineError(
    await cli(['token', 'create', '--username', 'limited-cli', '--expires-in', 'soon']),
    /expected a duration/,
  );
});

test('token list shows uid, label and use without the token; token revoke ends one; --all shows revoked ones', async () => {
  await cli(['user', 'create', '--username', 'tokens-of']);
  const made = await cli(['token', 'create', '--username', 'tokens-of', '--label', 'laptop']);
  const listed = await cli(['token', 'list', '--username', 'tokens-of']);
  expect(listed.stderr).toBe('');
  expect(listed.json.map((t: any) => t.label)).toEqual(['laptop', 'cli']);
  // The fields GET /users/tokens lists (one presenter: src/views/api-token.view.ts).
  expect(Object.keys(listed.json[0]).sort()).toEqual([
    'circuit_uids',
    'created_at',
    'credits_spent_today',
    'expires_at',
    'label',
    'last_used_at',
    'max_credits_per_day',
    'scopes',
    'uid',
  ]);
  expect(listed.stdout).not.toContain(made.json.token);

  const laptop = listed.json[0].uid;
  expect((await cli(['token', 'revoke', '--username', 'tokens-of', '--uid', laptop])).json).toEqual({
    uid: laptop,
    revoked: true,
  });
  expect((await cli(['token', 'list', '--username', 'tokens-of'])).json.map((t: any) => t.label)).toEqual(['cli']);
  const all = await cli(['token', 'list', '--username', 'tokens-of', '--all']);
  expect(all.json.find((t: any) => t.uid === laptop).revoked_at).toEqual(expect.any(String));
  expectOneLineError(await cli(['token', 'revoke', '--username', 'tokens-of', '--uid', laptop]), /not found/);
  expectOneLineError(await cli(['token', 'revoke', '--username', 'tokens-of', '--uid', 'nope']), /not found/);
  expectOneLineError(await cli(['token', 'revoke', '--username', 'tokens-of']), /required option '--uid/);
});

test('run show prints a run with the operator details; an unknown run fails on one line', async () => {
  const created = await cli(['user', 'create', '--username', 'runner', '--credits', '5']);
  const db = new Client({ connectionString: dbUrl });
  await db.connect();
  let runUid: string;
  try {
    const {
      rows: [circuit],
    } = await db.query(
      `INSERT INTO circuits (uid, owner_uid, name) VALUES (gen_random_uuid(), $1, 'shown') RETURNING uid`,
      [created.json.uid],
    );
    const {
      rows: [version],
    } = await db.query(
      `INSERT INTO circuit_versions (uid, circuit_uid, number, definition) VALUES (gen_random_uuid(), $1, 1, '{}') RETURNING uid`,
      [circuit.uid],
    );
    const {
      rows: [run],
    } = await db.query(
      `INSERT INTO circuit_runs (uid, user_uid, circuit_uid, circuit_version_uid, input, state, ended_at, failure_reason, credits_cost, attempt)
       VALUES (gen_random_uuid(), $1, $2, $3, '{}', 'EXCEPTION', now(), 'step a: JSONata: boom', 1, 1) RETURNING uid`,
      [created.json.uid, circuit.uid, version.uid],
    );
    runUid = run.uid;
  } finally {
    await db.end();
  }
  const shown = await cli(['run', 'show', '--uid', runUid]);
  expect(shown.stderr).toBe('');
  expect(shown.json).toMatchObject({
    uid: runUid,
    state: 'EXCEPTION',
    username: 'runner',
    failure_reason: 'step a: JSONata: boom',
    credits_cost: 1,
    attempt: 1,
    document_type: 'circuit_run',
  });
  expectOneLineError(
    await cli(['run', 'show', '--uid', '00000000-0000-4000-8000-000000000000']),
    /^Circuit run .* not found$/,
  );
  expectOneLineError(await cli(['run', 'show', '--uid', 'nope']), /not found/);
});

test('blob list prints a user’s blobs in the REST list shape', async () => {
  await cli(['user', 'create', '--username', 'blob-lister']);
  const empty = await cli(['blob', 'list', '--username', 'blob-lister']);
  expect(empty.stderr).toBe('');
  expect(empty.json).toEqual({ meta: { total_count: 0, limit: 10, page: 1 }, data: [] });
  const file = path.join(tmp, 'listed.txt');
  fs.writeFileSync(file, 'listed');
  await cli(['blob', 'upload', '--username', 'blob-lister', file], { SECRET_KEY: 'test-secret' });
  const listed = await cli(['blob', 'list', '--username', 'blob-lister', '--limit', '5']);
  expect(listed.json.meta).toEqual({ total_count: 1, limit: 5, page: 1 });
  expect(listed.json.data[0]).toMatchObject({ bytes: 6, blob_type: 'local' });
  expectOneLineError(await cli(['blob', 'list', '--username', 'blob-lister', '--limit', '0']), /--limit/);
  expectOneLineError(
    await cli(['blob', 'list', '--username', 'blob-lister', '--limit', '101']),
    /--limit must be at most 100/,
  );
});

test('--version prints the package version; --help marks required options (bin)', async () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const version = await bin(['--version']);
  expect(version.code).toBe(0);
  expect(version.stdout.trim()).toBe(pkg.version);
  const help = await bin(['credits', 'grant', '--help']);
  expect(help.stdout).toMatch(/--username <username>\s+the user to credit \(required\)/);
  expect(help.stdout).not.toMatch(/--help.*\(required\)/);
  const showHelp = await bin(['credits', 'show', '--help']);
  expect(showHelp.stdout).toMatch(/--ledger <n>[^]*\(default: 10\)/);
  expect(showHelp.stdout).not.toMatch(/--ledger[^-]*\(required\)/);
});

test('circuit create prints the circuit in REST shape; version publish prints versions and validates definitions', async () => {
  await cli(['user', 'create', '--username', 'maker']);
  const created = await cli([
    'circuit',
    'create',
    '--username',
    'maker',
    '--name',
    'hello',
    '--description',
    'greets',
    '--protected',
  ]);
  expect(created.stderr).toBe('');
  expect(created.json).toEqual({
    uid: expect.any(String),
    name: 'hello',
    description: 'greets',
    username: 'maker',
    is_private: false,
    is_protected: true,
    license_type: null,
    user_circuit_metric_uid: null,
    is_deprecated: false,
    star_count: 0,
    adaptor_uid: expect.any(String),
    primary_version_uid: null,
    created_at: expect.any(String),
    updated_at: expect.any(String),
  });
  expect(new Date(created.json.created_at).toISOString()).toBe(created.json.created_at);
  expectOneLineError(
    await cli(['circuit', 'create', '--username', 'maker', '--name', 'hello']),
    /already have a circuit named hello/,
  );
  expectOneLineError(await cli(['circuit', 'create', '--username', 'nobody', '--name', 'x']), /User nobody not found/);

  const file = path.join(tmp, 'hello.json');
  fs.writeFileSync(file, JSON.stringify(HELLO_DEFINITION));
  const v1 = await cli(['version', 'publish', '--username', 'maker', '--circuit', 'hello', '--file', file]);
  expect(v1.stderr).toBe('');
  expect(v1.json).toEqual({
    uid: expect.any(String),
    circuit_uid: created.json.uid,
    number: 1,
    definition: HELLO_DEFINITION,
    is_primary: true,
    is_deprecated: false,
    created_at: expect.any(String),
  });
  const v2 = await cli(['version', 'publish', '--username', 'maker', '--circuit', 'hello', '--file', file]);
  expect(v2.json).toMatchObject({ number: 2, is_primary: false });
  const v3 = await cli([
    'version',
    'publish',
    '--username',
    'maker',
    '--circuit',
    'hello',
    '--file',
    file,
    '--primary',
  ]);
  expect(v3.json).toMatchObject({ number: 3, is_primary: true });

  const bad = path.join(tmp, 'bad.json');
  fs.writeFileSync(bad, JSON.stringify({ query_schema: { type: 'object' }, steps: [] }));
  expectOneLineError(
    await cli(['version', 'publish', '--username', 'maker', '--circuit', 'hello', '--file', bad]),
    /steps/,
  );
  const notJson = path.join(tmp, 'not.json');
  fs.writeFileSync(notJson, '{ "steps": [');
  expectOneLineError(
    await cli(['version', 'publish', '--username', 'maker', '--circuit', 'hello', '--file', notJson]),
    /not valid JSON/,
  );
  expectOneLineError(
    await cli([
      'version',
      'publish',
      '--username',
      'maker',
      '--circuit',
      'hello',
      '--file',
      path.join(tmp, 'missing.json'),
    ]),
    /cannot read definition file .*no such file/,
  );
  expectOneLineError(
    await cli(['version', 'publish', '--username', 'maker', '--circuit', 'nope', '--file', file]),
    /Circuit maker\/nope not found/,
  );
});

test('version set-primary promotes a version; alias set creates and moves an alias; both fail on one line', async () => {
  await cli(['user', 'create', '--username', 'releaser']);
  await cli(['circuit', 'create', '--username', 'releaser', '--name', 'svc']);
  const file = path.join(tmp, 'svc.json');
  fs.writeFileSync(file, JSON.stringify(HELLO_DEFINITION));
  const v1 = (await cli(['version', 'publish', '--username', 'releaser', '--circuit', 'svc', '--file', file])).json;
  const v2 = (await cli(['version', 'publish', '--username', 'releaser', '--circuit', 'svc', '--file', file])).json;

  const promoted = await cli([
    'version',
    'set-primary',
    '--username',
    'releaser',
    '--circuit',
    'svc',
    '--version',
    v2.uid,
  ]);
  expect(promoted.stderr).toBe('');
  expect(promoted.json).toMatchObject({
    uid: v1.circuit_uid,
    name: 'svc',
    primary_version_uid: v2.uid,
    adaptor_uid: expect.any(String),
  });
  expectOneLineError(
    await cli(['version', 'set-primary', '--username', 'releaser', '--circuit', 'svc', '--version', 'nope']),
    /^Circuit version not found$/,
  );
  expectOneLineError(
    await cli(['version', 'set-primary', '--username', 'releaser', '--circuit', 'svc']),
    /required option '--version/,
  );

  const set = await cli([
    'alias',
    'set',
    '--username',
    'releaser',
    '--circuit',
    'svc',
    '--name',
    'prod',
    '--route',
    `${v1.uid}=90`,
    '--route',
    `${v2.uid}=10`,
  ]);
  expect(set.stderr).toBe('');
  expect(set.json).toEqual({
    name: 'prod',
    circuit_uid: v1.circuit_uid,
    routes: [
      { version_uid: v1.uid, weight: 90 },
      { version_uid: v2.uid, weight: 10 },
    ],
    updated_at: expect.any(String),
  });
  const moved = await cli([
    'alias',
    'set',
    '--username',
    'releaser',
    '--circuit',
    'svc',
    '--name',
    'prod',
    '--route',
    `${v2.uid}=100`,
  ]);
  expect(moved.json.routes).toEqual([{ version_uid: v2.uid, weight: 100 }]);
  const db = new Client({ connectionString: dbUrl });
  await db.connect();
  try {
    const { rows } = await db.query('SELECT routes FROM circuit_alias_history WHERE circuit_uid = $1 AND name = $2', [
      v1.circuit_uid,
      'prod',
    ]);
    expect(rows).toEqual([{ routes: set.json.routes }]);
  } finally {
    await db.end();
  }
  expectOneLineError(
    await cli([
      'alias',
      'set',
      '--username',
      'releaser',
      '--circuit',
      'svc',
      '--name',
      'prod',
      '--route',
      `${v1.uid}=50`,
    ]),
    /weights must add up to 100, got 50/,
  );
  expectOneLineError(
    await cli([
      'alias',
      'set',
      '--username',
      'releaser',
      '--circuit',
      'svc',
      '--name',
      'Prod',
      '--route',
      `${v1.uid}=100`,
    ]),
    /^name must /,
  );
  expectOneLineError(
    await cli([
      'alias',
      'set',
      '--username',
      'releaser',
      '--circuit',
      'svc',
      '--name',
      'prod',
      '--route',
      `${v1.uid}=1.5`,
    ]),
    /--route/,
  );
  expectOneLineError(
    await cli([
      'alias',
      'set',
      '--username',
      'releaser',
      '--circuit',
      'svc',
      '--name',
      'prod',
      '--route',
      '00000000-0000-4000-8000-000000000000=100',
    ]),
    /routes\[0\]\.version_uid is not a version of this circuit/,
  );
  expectOneLineError(
    await cli([
      'alias',
      'set',
      '--username',
      'releaser',
      '--circuit',
      'none',
      '--name',
      'prod',
      '--route',
      `${v1.uid}=100`,
    ]),
    /Circuit releaser\/none not found/,
  );
});

test('migrate applies every migration to an empty database once, then nothing', async () => {
  const name = `t_cli_migrate_${process.pid}`;
  const admin = new Client({ connectionString: process.env.TEST_PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  try {
    const url = databaseUrl(name);
    const first = await cli(['migrate'], { DATABASE_URL: url });
    expect(first.stderr).toBe('');
    expect(first.json.applied.length).toBeGreaterThan(0);
    expect(first.json.applied[0]).toBe('0001-foundation');
    expect((await cli(['migrate'], { DATABASE_URL: url })).json).toEqual({ applied: [] });
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
});

test('bad configuration and an unreachable database fail on one line (bin)', async () => {
  expectOneLineError(await bin(['migrate'], { DATABASE_URL: 'mysql://x' }), /bad configuration: DATABASE_URL/);
  const closed = await bin(['migrate'], { DATABASE_URL: 'postgres://u:secretpw@127.0.0.1:1/none' });
  expectOneLineError(closed, /ECONNREFUSED|connect/);
  expect(closed.stderr).not.toContain('secretpw');
});

test('blob upload stores a file and prints the blob in REST shape', async () => {
  await cli(['user', 'create', '--username', 'uploader']);
  const file = path.join(tmp, 'notes.txt');
  fs.writeFileSync(file, 'hello blob');
  const result = await cli(['blob', 'upload', '--username', 'uploader', file], { SECRET_KEY: 'test-secret' });
  expect(result.stderr).toBe('');
  expect(result.json).toMatchObject({
    uid: expect.any(String),
    hash: crypto.createHash('sha256').update('hello blob').digest('hex'),
    bytes: 10,
    total_reads: 0,
    can_delete: false,
    mime_type: 'text/plain',
    blob_type: 'local',
    path: expect.stringMatching(new RegExp(`^local://[^/]+/${result.json.uid}$`)),
  });
  expect(fs.existsSync(path.join(tmp, 'data', 'blobs'))).toBe(true);
  expectOneLineError(
    await cli(['blob', 'upload', '--username', 'uploader', path.join(tmp, 'none.txt')]),
    /cannot read .*no such file/,
  );
});

test('--help lists every command (bin)', async () => {
  const help = await bin(['--help']);
  expect(help.code).toBe(0);
  for (const command of ['user', 'token', 'credits', 'circuit', 'version', 'alias', 'blob', 'run', 'migrate', 'worker'])
    expect(help.stdout).toContain(command);
});

test('worker runs until SIGINT and then exits 0 (bin)', async () => {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [BIN, 'worker'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: dbUrl,
      DATA_DIR: path.join(tmp, 'data'),
      LOG_LEVEL: 'info',
      JOB_LOCK_LIFETIME_MS: '5000',
    },
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const deadline = Date.now() + 30_000;
    while (!out.includes('circuit worker ready') && Date.now() < deadline && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 100));
    expect(out).toContain('circuit worker ready');
    const ready = JSON.parse(out.split('\n').find((line) => line.includes('circuit worker ready'))!);
    const url = new URL(dbUrl);
    expect(ready).toMatchObject({
      database: 'external',
      databaseHost: url.hostname,
      databasePort: Number(url.port || 5432),
      databaseName: url.pathname.slice(1),
    });
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});
