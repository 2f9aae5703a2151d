// Shared by the bench scenarios: a fresh embedded PostgreSQL with the README's example circuit,
// service processes from dist/, an Express hello-world yardstick and autocannon measurements.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { performance } = require('node:perf_hooks');

const root = path.join(__dirname, '..', '..');
const dist = path.join(root, 'dist', 'src');

const HELLO = {
  query_schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  steps: [
    { id: 'greet', kind: 'template', template: 'Hello {{input.name}}' },
    { id: 'shout', kind: 'transform', expression: '$uppercase(steps.greet.output)' },
  ],
  output: 'steps.shout.output',
};

const pct = (sorted, p) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const rssMb = (pid) => {
  try {
    return Math.round(Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024);
  } catch {
    return NaN;
  }
};

async function embeddedDatabase(dir) {
  const { startEmbeddedDatabase } = require(path.join(dist, 'db', 'embedded.js'));
  return startEmbeddedDatabase(path.join(dir, 'data'));
}

/**
 * A new database on the server of BENCH_DATABASE_URL (for machines where the embedded PostgreSQL
 * cannot run), dropped by stop(). Its CPU is then that server's: `postmasterPid` finds no postmaster.
 * BENCH_LOG_STATEMENTS=1 logs every statement on that database.
 */
async function freshDatabase(adminUrl, prefix) {
  const { Client } = require('pg');
  const name = `circuits_bench_${prefix.replace(/\W/g, '_')}_${process.pid}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  // Every statement of the run into the server's log (its line names the database): how many
  // statements a run costs, and which, is read from there.
  if (process.env.BENCH_LOG_STATEMENTS === '1') {
    await admin.query(`ALTER DATABASE ${name} SET log_min_duration_statement = 0`);
  }
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async stop() {
      const again = new Client({ connectionString: adminUrl });
      await again.connect();
      await again.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await again.end();
    },
  };
}

/**
 * A temp dir with an embedded PostgreSQL (or a new database on BENCH_DATABASE_URL's server), migrated, holding one user (token) and the example circuit.
 * `circuits` ({name: definition}) publishes more circuits of that user; their adaptors are in `adaptors`.
 */
async function startFixtures(prefix, { circuits = {} } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `circuits-bench-${prefix}-`));
  const db = process.env.BENCH_DATABASE_URL
    ? await freshDatabase(process.env.BENCH_DATABASE_URL, prefix)
    : await embeddedDatabase(dir);
  require('reflect-metadata');
  const { createSequelize } = require(path.join(dist, 'db', 'sequelize.js'));
  const { migrate } = require(path.join(dist, 'db', 'migrate.js'));
  const { initModels, CircuitAdaptor } = require(path.join(dist, 'models', 'index.js'));
  const { createUser } = require(path.join(dist, 'commands', 'create-user.js'));
  const { createApiToken } = require(path.join(dist, 'commands', 'create-api-token.js'));
  const { createCircuit } = require(path.join(dist, 'commands', 'create-circuit.js'));
  const { publishVersion } = require(path.join(dist, 'commands', 'publish-version.js'));
  const { createJsonSchemaService } = require(path.join(dist, 'engine', 'json-schemas.js'));
  const { Sandbox } = require(path.join(dist, 'sandbox', 'sandbox.js'));
  const schemas = createJsonSchemaService();
  const sandbox = new Sandbox();
  const sequelize = createSequelize(db.url, 4);
  initModels(sequelize);
  await migrate(sequelize);
  const user = await createUser({ username: 'bench', credits: 1_000_000_000 });
  const { token } = await createApiToken(user, 'bench');
  const circuit = await createCircuit(sequelize, user, { name: 'hello' });
  await publishVersion({ sequelize, schemas, sandbox }, user, circuit, HELLO);
  const adaptor = await CircuitAdaptor.findOne({ where: { circuit_uid: circuit.uid } });
  const adaptors = {};
  for (const [name, definition] of Object.entries(circuits)) {
    const extra = await createCircuit(sequelize, user, { name });
    await publishVersion({ sequelize, schemas, sandbox }, user, extra, definition);
    adaptors[name] = (await CircuitAdaptor.findOne({ where: { circuit_uid: extra.uid } })).uid;
  }
  await Promise.all([schemas.close(), sandbox.close()]);
  await sequelize.close();
  return {
    dir,
    db,
    token,
    adaptorUid: adaptor.uid,
    adaptors,
    env: { DATABASE_URL: db.url, DATA_DIR: path.join(dir, 'app') },
    async stop() {
      await db.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Asks `url` (a /healthz) every `everyMs` ms, one request at a time, until stop(); stop() resolves to
 * the number of answers, their p50, p99 and the slowest (ms), and how many were not 200 or failed.
 */
function pollHealth(url, everyMs = 50) {
  const times = [];
  const phases = new Map();
  let phase = 'all';
  let errors = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const started = performance.now();
      try {
        const res = await fetch(url);
        await res.arrayBuffer();
        if (res.status !== 200) errors++;
      } catch {
        errors++;
      }
      const took = performance.now() - started;
      times.push(took);
      if (!phases.has(phase)) phases.set(phase, []);
      phases.get(phase).push(took);
      await sleep(everyMs);
    }
  })();
  const stats = (list) => {
    const sorted = [...list].sort((a, b) => a - b);
    return {
      polls: sorted.length,
      p50_ms: +pct(sorted, 50).toFixed(1),
      p99_ms: +pct(sorted, 99).toFixed(1),
      max_ms: +(sorted.at(-1) ?? NaN).toFixed(1),
    };
  };
  return {
    /** Later answers count towards this phase too (reported apart by stop()). */
    phase(name) {
      phase = name;
    },
    async stop() {
      stopped = true;
      await loop;
      const sorted = [...times].sort((a, b) => a - b);
      const byPhase =
        phases.size > 1 ? { phases: Object.fromEntries([...phases].map(([name, list]) => [name, stats(list)])) } : {};
      return {
        ...byPhase,
        polls: sorted.length,
        p50_ms: +pct(sorted, 50).toFixed(1),
        p99_ms: +pct(sorted, 99).toFixed(1),
        max_ms: +(sorted.at(-1) ?? NaN).toFixed(1),
        errors,
      };
    },
  };
}

/**
 * A keep-alive HTTP client as light as the load generator should be: fetch() cost ~1 ms of CPU per
 * request in the bench process (more than the service's own read), on the same 2 cores as the service.
 * Resolves {status, headers, body} with the body parsed as JSON when there is one.
 */
function jsonClient(maxSockets = 256) {
  const http = require('node:http');
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  return (method, url, { headers = {}, body } = {}) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        url,
        {
          method,
          agent,
          headers: payload
            ? { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
            : headers,
        },
        (res) => {
          const chunks = [];
          res.on('data', (chunk) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode, headers: res.headers, body: text ? JSON.parse(text) : undefined });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}

/**
 * Starts dist/src/<script> and resolves once it logs that it is ready (and every message of
 * `alsoWaitFor`, e.g. 'search index loaded'); later logs are drained unread. `nodeArgs` go before the
 * script (DEFAULT_SHAPE: what `npm start` passes), then BENCH_NODE_ARGS. `distDir`: another build's
 * dist/src (a "before" measured in the same run); BENCH_SERVICE_DIST sets it for every scenario, so
 * `BENCH_SERVICE_DIST=/other/checkout/dist/src npm run bench X` measures another build (an A/B of a change).
 */
function spawnService(
  script,
  env,
  { alsoWaitFor = [], nodeArgs = [], distDir = process.env.BENCH_SERVICE_DIST || dist } = {},
) {
  const awaited = new Set(alsoWaitFor);
  let ready;
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      ...(process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []),
      path.join(distDir, script),
    ],
    {
      cwd: root,
      // One bench client submits thousands of runs a minute with one token: the per-token run limit
      // is on but high enough never to refuse; RUN_RATE_LIMIT_PER_MINUTE=0 turns it off.
      env: {
        RUN_RATE_LIMIT_PER_MINUTE: '100000000',
        ...process.env,
        LOG_LEVEL: 'info',
        PORT: '0',
        HOST: '127.0.0.1',
        REDIS_URL: '',
        MONGODB_URL: '',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      let i;
      while ((i = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        try {
          const entry = JSON.parse(line);
          // main.js logs both: its worker thread is ready first, the service (with the URL) after.
          if (entry.msg === (script === 'worker.js' ? 'circuit worker ready' : 'circuit service ready'))
            ready = { url: entry.url };
          awaited.delete(entry.msg);
          if (ready && !awaited.size) {
            child.stdout.removeAllListeners('data');
            child.stdout.resume();
            resolve({ child, url: ready.url });
            return;
          }
          if (entry.level >= 50) console.error(line);
        } catch {
          /* not JSON */
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

async function stopProcess(p) {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise((resolve) => p.child.once('exit', resolve));
  p.child.kill('SIGTERM');
  await exited;
}

/** CPU seconds (user + system) used so far by a process and, with `children`, by its child processes. */
function cpuSeconds(pid, { children = false } = {}) {
  const fs = require('node:fs');
  const ticks = 100; // USER_HZ on Linux
  const of = (p) => {
    try {
      const fields = fs
        .readFileSync(`/proc/${p}/stat`, 'utf8')
        .replace(/^.*\) /, '')
        .split(' ');
      // utime + stime; for a parent counted with its children, also cutime + cstime: what its exited
      // children used (PostgreSQL backends of closed connections), which would otherwise drop out.
      return (
        (Number(fields[11]) +
          Number(fields[12]) +
          (p === pid && children ? Number(fields[13]) + Number(fields[14]) : 0)) /
        ticks
      );
    } catch {
      return 0;
    }
  };
  let total = of(pid);
  if (children) {
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const fields = fs
          .readFileSync(`/proc/${entry}/stat`, 'utf8')
          .replace(/^.*\) /, '')
          .split(' ');
        if (Number(fields[1]) === pid) total += of(entry);
      } catch {
        /* gone */
      }
    }
  }
  return total;
}

/** The postmaster of the embedded PostgreSQL whose data directory lies under `dir`. */
function postmasterPid(dir) {
  const fs = require('node:fs');
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (/postgres$/.test(cmd[0]) && cmd.some((a) => a.startsWith(dir))) return Number(entry);
    } catch {
      /* gone */
    }
  }
  return undefined;
}

/**
 * autocannon for `seconds` after a 2 s warm-up; latency percentiles from every response. With `cpu`
 * ({name: pid}, {name: {pid, children: true}} or {name: {pidsOf: async () => pids}}), also the CPU each measured request cost each process
 * (from /proc: less sensitive to other load on the machine than the latencies).
 */
/** Load for `seconds` with nothing recorded: a freshly started service's first seconds (JIT, pools, caches) are not its steady state. */
function warmUp({ url, method = 'GET', headers, body, seconds, connections, setupRequest }) {
  const autocannon = require('autocannon');
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url,
        method,
        headers,
        body,
        connections,
        duration: seconds,
        ...(setupRequest ? { requests: [{ setupRequest }] } : {}),
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
  });
}

async function measure({ label, url, method = 'GET', headers, body, seconds, connections, setupRequest, cpu }) {
  const autocannon = require('autocannon');
  const latencies = [];
  let non2xx = 0;
  const run = (duration, record) =>
    new Promise((resolve, reject) => {
      const instance = autocannon(
        {
          url,
          method,
          headers,
          body,
          connections,
          duration,
          ...(setupRequest ? { requests: [{ setupRequest }] } : {}),
        },
        (err, result) => (err ? reject(err) : resolve(result)),
      );
      if (record) {
        instance.on('response', (_client, statusCode, _bytes, responseTime) => {
          latencies.push(responseTime);
          if (statusCode < 200 || statusCode >= 400) non2xx++;
        });
      }
    });
  await warmUp({ url, method, headers, body, seconds: 2, connections, setupRequest });
  // {pidsOf}: processes found after the warm-up (the backends of a pool that has grown by then).
  const found = Object.fromEntries(
    await Promise.all(
      Object.entries(cpu ?? {})
        .filter(([, p]) => p.pidsOf)
        .map(async ([name, p]) => [name, await p.pidsOf()]),
    ),
  );
  const cpuOf = () =>
    Object.fromEntries(
      Object.entries(cpu ?? {}).map(([name, p]) => [
        name,
        found[name]
          ? found[name].reduce((sum, pid) => sum + cpuSeconds(pid), 0)
          : typeof p === 'number'
            ? cpuSeconds(p)
            : cpuSeconds(p.pid, p),
      ]),
    );
  const cpuBefore = cpuOf();
  const result = await run(seconds, true);
  const cpuAfter = cpuOf();
  latencies.sort((a, b) => a - b);
  const row = {
    label,
    rps: Math.round(result.requests.average),
    p50_ms: +pct(latencies, 50).toFixed(2),
    p95_ms: +pct(latencies, 95).toFixed(2),
    p99_ms: +pct(latencies, 99).toFixed(2),
    errors: non2xx,
  };
  for (const name of Object.keys(cpuAfter))
    row[`cpu_ms_per_request_${name}`] = +(((cpuAfter[name] - cpuBefore[name]) * 1000) / latencies.length).toFixed(3);
  const cpuText = Object.keys(cpuAfter)
    .map((name) => `  CPU/req ${name} ${row[`cpu_ms_per_request_${name}`]} ms`)
    .join('');
  console.log(
    `${label.padEnd(44)} ${String(row.rps).padStart(6)} req/s  p50 ${row.p50_ms} ms  p95 ${row.p95_ms} ms  p99 ${row.p99_ms} ms  errors ${non2xx}${cpuText}`,
  );
  return row;
}

/**
 * The default deployment (`npm start`): one main.js that serves the API and executes runs, with the
 * node flags of package.json's start script and no JOB_CONCURRENCY or lock override from the bench.
 */
const DEFAULT_SHAPE = { script: 'main.js', nodeArgs: ['--no-node-snapshot'] };

/** The soft and hard limits of open files of this process (children inherit them). */
function fdLimit() {
  const line = /Max open files\s+(\S+)\s+(\S+)/.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
  const num = (v) => (v === 'unlimited' ? Infinity : Number(v));
  return line ? { soft: num(line[1]), hard: num(line[2]) } : { soft: NaN, hard: NaN };
}

/**
 * A loopback upstream in its own process (so its CPU is not the client's): answers every request with
 * 200 {"ok":true} after `delayMs`. Its open-files limit is raised to the hard limit. stats({reset})
 * resolves {requests, inflight, max_inflight} (reset: the maximum starts again from now); pid for cpuSeconds.
 */
async function startUpstream({ delayMs }) {
  const code = `
    const http = require('node:http');
    const delay = Number(process.env.UPSTREAM_DELAY_MS);
    let inflight = 0, max = 0, requests = 0;
    const server = http.createServer((req, res) => {
      requests++; inflight++; if (inflight > max) max = inflight;
      req.resume();
      const timer = setTimeout(() => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"ok":true}'); }, delay);
      res.once('close', () => { clearTimeout(timer); inflight--; });
    });
    server.maxConnections = 1e6; server.requestTimeout = 0; server.headersTimeout = 60000; server.keepAliveTimeout = 5000;
    server.listen({ port: 0, host: '127.0.0.1', backlog: 65535 }, () => process.send({ port: server.address().port }));
    process.on('message', (m) => {
      process.send({ stats: { requests, inflight, max_inflight: max } });
      if (m === 'reset') max = inflight;
    });
    process.on('disconnect', () => process.exit(0));`;
  const child = spawn(
    '/bin/sh',
    ['-c', 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" -e "$1"', process.execPath, code],
    {
      cwd: root,
      env: { ...process.env, UPSTREAM_DELAY_MS: String(delayMs) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const { port } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (c) => reject(new Error(`upstream exited with ${c}`)));
  });
  let queue = Promise.resolve();
  const ask = (message) =>
    (queue = queue.then(
      () =>
        new Promise((resolve) => {
          child.once('message', (m) => resolve(m.stats));
          child.send(message);
        }),
    ));
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stats: ({ reset = false } = {}) => ask(reset ? 'reset' : 'stats'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Samples the RSS of `pid` every `everyMs` ms until stop(), which resolves the largest (MB). */
function watchRss(pid, everyMs = 200) {
  let max = rssMb(pid);
  const timer = setInterval(() => {
    const now = rssMb(pid);
    if (now > max) max = now;
  }, everyMs);
  return {
    peek: () => max,
    stop() {
      clearInterval(timer);
      const now = rssMb(pid);
      return now > max ? now : max;
    },
  };
}

/** The yardstick: an Express 5 hello-world in its own process, measured like the service. */
async function helloBaseline({ seconds, connections }) {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `
    const app = require('express')();
    app.get('/', (_req, res) => { res.json({ hello: 'world' }); });
    const server = app.listen(0, '127.0.0.1', () => process.send(server.address().port));
  `,
    ],
    { cwd: root, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const port = await new Promise((resolve) => child.once('message', resolve));
  try {
    return await measure({
      label: 'Express hello-world (baseline)',
      url: `http://127.0.0.1:${port}/`,
      seconds,
      connections,
    });
  } finally {
    child.kill('SIGTERM');
  }
}

/** PSS of one process in MB (kB in smaps_rollup), 0 when it is gone. */
function pssMb(pid) {
  try {
    const kb = Number(/^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))[1]);
    return kb / 1024;
  } catch {
    return 0;
  }
}

/** `pid` and every process under it. */
function processTree(pid) {
  const parents = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(
        fs
          .readFileSync(`/proc/${entry}/stat`, 'utf8')
          .replace(/^.*\) /, '')
          .split(' ')[1],
      );
      if (!parents.has(ppid)) parents.set(ppid, []);
      parents.get(ppid).push(Number(entry));
    } catch {
      /* gone */
    }
  }
  const all = [];
  const walk = (p) => {
    all.push(p);
    for (const child of parents.get(p) ?? []) walk(child);
  };
  walk(pid);
  return all;
}

/** PSS (MB) of each group of processes ({name: root pid}) and their sum, and how many processes each has. */
function pssOf(roots) {
  const out = {};
  let total = 0;
  for (const [name, pid] of Object.entries(roots)) {
    if (!pid) continue;
    const pids = processTree(pid);
    const mb = pids.reduce((sum, p) => sum + pssMb(p), 0);
    out[name] = { pss_mb: +mb.toFixed(1), processes: pids.length };
    total += mb;
  }
  out.total_mb = +total.toFixed(1);
  return out;
}

module.exports = {
  pssOf,
  processTree,
  root,
  dist,
  HELLO,
  DEFAULT_SHAPE,
  pct,
  sleep,
  rssMb,
  fdLimit,
  startUpstream,
  watchRss,
  cpuSeconds,
  postmasterPid,
  startFixtures,
  pollHealth,
  spawnService,
  stopProcess,
  measure,
  warmUp,
  helloBaseline,
  jsonClient,
};
