import fs from 'node:fs';
import path from 'node:path';

/** docs/screenshots holds what the README and docs show: every image referenced exists, and every image is referenced. */
const ROOT = path.join(__dirname, '..');
const SCREENSHOTS = path.join(ROOT, 'docs', 'screenshots');

function documents(): string[] {
  const docs = fs.readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md'));
  return [path.join(ROOT, 'README.md'), ...docs.map((name) => path.join(ROOT, 'docs', name))];
}

test('every screenshot the README and docs name exists, and every screenshot is named by them', () => {
  const named = new Set<string>();
  for (const file of documents())
    for (const match of fs.readFileSync(file, 'utf8').matchAll(/docs\/screenshots\/([\w.-]+\.png)/g))
      named.add(match[1]);
  const present = fs.readdirSync(SCREENSHOTS).filter((name) => name.endsWith('.png'));
  expect([...named].filter((name) => !present.includes(name))).toEqual([]);
  expect(present.filter((name) => !named.has(name))).toEqual([]);
});

test('the screenshots are the ones the browser tests take', () => {
  const taken = new Set<string>();
  for (const file of ['browser.settings.test.ts', 'browser.runs-filter.test.ts'])
    for (const match of fs.readFileSync(path.join(__dirname, file), 'utf8').matchAll(/shot\(\w+, '([\w-]+)'\)/g))
      taken.add(`${match[1]}.png`);
  expect(fs.readdirSync(SCREENSHOTS).filter((name) => !taken.has(name))).toEqual([]);
});
