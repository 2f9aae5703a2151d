import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.join(__dirname, '..');

/**
 * `npx circuits` has npm load and check the whole dependency tree before the CLI starts (2–3 s a call,
 * docs/cli.md); the README and docs show the command that starts at once.
 */
test('the README, the docs and the landing page run the CLI as node bin/circuits.js, never as npx circuits', () => {
  const files = [
    'README.md',
    ...readdirSync(path.join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
    'src/http/landing-page.ts',
  ];
  const slow: string[] = [];
  for (const file of files) {
    readFileSync(path.join(root, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        // A command to type: at the start of a line or a <pre>, or inside $( … ).
        if (/(^\s*|<pre>|\$\()npx circuits\b/.test(line)) slow.push(`${file}:${i + 1}: ${line.trim()}`);
      });
  }
  expect(slow).toEqual([]);
});

test('node bin/circuits.js answers --help with no npm in between', () => {
  const help = execFileSync(process.execPath, [path.join(root, 'bin', 'circuits.js'), '--help'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  expect(help).toMatch(/^Usage: circuits /);
});
