#!/usr/bin/env node
// Per-step cost of the sandbox: p50/p95 of one `template` and one `transform` step executed through the
// engine (dist/, isolated-vm isolates) against the same work done in-process as before the sandbox
// (Handlebars and JSONata on the main thread, compiled once). `npm run bench steps` (builds dist/ first).
// Env: BENCH_STEPS (iterations per measurement, default 2000).
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const Handlebars = require('handlebars');
const jsonata = require('jsonata');

const dist = path.join(__dirname, '..', '..', 'dist', 'src');
const { executeDefinition } = require(path.join(dist, 'engine', 'run-executor.js'));
const { loadConfig } = require(path.join(dist, 'config.js'));
const { Sandbox } = require(path.join(dist, 'sandbox', 'sandbox.js'));

const N = Number(process.env.BENCH_STEPS || 2000);
const input = { name: 'Ada', items: ['a', 'b', 'c'] };
const TEMPLATE = 'Hello {{input.name}}{{#each input.items}} [{{this}}]{{/each}}';
const EXPRESSION = '$uppercase(input.name) & " has " & $string($count(input.items)) & " items"';

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function measure(fn) {
  for (let i = 0; i < Math.min(200, N); i++) await fn(); // warm-up: isolates booted, templates compiled
  const times = [];
  for (let i = 0; i < N; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: pct(times, 50), p95: pct(times, 95) };
}

async function main() {
  const config = loadConfig({ LOG_LEVEL: 'silent' });
  const sandbox = new Sandbox();
  const services = { config, sandbox, log: { error() {}, warn() {}, info() {}, debug() {} } };
  const context = {
    run: { uid: 'bench', userUid: 'bench', circuitUid: 'bench', versionUid: 'bench' },
    services,
    signal: new AbortController().signal,
    depth: 0,
    budget: { maxSteps: 1_000_000, maxResultBytes: config.runMaxResultBytes, hold: async () => true },
  };
  const step = (definitionStep) => () =>
    executeDefinition({ query_schema: { type: 'object' }, steps: [definitionStep] }, input, context);

  const hbs = Handlebars.create().compile(TEMPLATE, { noEscape: true });
  const expression = jsonata(EXPRESSION);
  const rows = [
    ['template step, sandbox', await measure(step({ id: 't', kind: 'template', template: TEMPLATE }))],
    ['template, in-process (before)', await measure(async () => hbs({ input, steps: {} }))],
    ['transform step, sandbox', await measure(step({ id: 'x', kind: 'transform', expression: EXPRESSION }))],
    [
      'transform, in-process (before)',
      await measure(async () => JSON.parse(JSON.stringify(await expression.evaluate({ input, steps: {} })))),
    ],
  ];
  console.log(`${N} sequential evaluations each (ms):`);
  for (const [name, { p50, p95 }] of rows)
    console.log(`  ${name.padEnd(32)} p50 ${p50.toFixed(3)}  p95 ${p95.toFixed(3)}`);
  await sandbox.close();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
