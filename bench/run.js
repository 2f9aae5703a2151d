#!/usr/bin/env node
// `npm run bench [scenario...]`: runs every bench/scenarios/*.js (or the named ones) one after another.
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const dir = path.join(__dirname, 'scenarios');
const all = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.js'))
  .map((f) => f.replace(/\.js$/, ''))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !all.includes(w));
if (unknown.length) {
  console.error(`unknown scenario(s): ${unknown.join(', ')}; have: ${all.join(', ')}`);
  process.exit(2);
}
let failed = 0;
for (const name of wanted.length ? wanted : all) {
  console.log(`\n=== bench: ${name} ===`);
  const result = spawnSync(process.execPath, [path.join(dir, `${name}.js`)], { stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
