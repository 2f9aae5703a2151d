#!/usr/bin/env node
'use strict';
// `node bin/circuits.js …` (or `npx circuits …`, 2–3 s slower: docs/cli.md) from the project directory:
// the CLI is compiled into dist/ by `npm run build` (which `npm install` runs through the prepare script).
const path = require('node:path');
const fs = require('node:fs');

const entry = path.join(__dirname, '..', 'dist', 'src', 'cli', 'index.js');
if (!fs.existsSync(entry)) {
  process.stderr.write(
    `circuits: ${path.relative(process.cwd(), entry) || entry} is missing; run npm run build first\n`,
  );
  process.exit(1);
}
require(entry).main(process.argv);
