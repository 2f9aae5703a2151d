import { readFileSync } from 'node:fs';
import path from 'node:path';

import { loadConfig } from '../src/config';

/** Variables the README documents that our code does not read itself: the OpenTelemetry SDK reads them. */
const READ_BY_LIBRARIES = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_SERVICE_NAME'];

function variablesReadByConfig(): string[] {
  const read = new Set<string>();
  const env = new Proxy({} as NodeJS.ProcessEnv, {
    get(_target, key) {
      if (typeof key === 'string' && /^[A-Z][A-Z0-9_]*$/.test(key)) read.add(key);
      return undefined;
    },
  });
  loadConfig(env);
  return [...read].sort();
}

/** The body rows of the README's Configuration table (the header and its rule left out). */
function configurationRows(): string[] {
  const readme = readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Configuration'));
  const table = section.slice(0, section.indexOf('\n## ', 1));
  return table
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2);
}

function variablesInReadmeTable(): string[] {
  return configurationRows()
    .map((row) => /^\| `([A-Z][A-Z0-9_]*)` \|/.exec(row)?.[1])
    .filter((name): name is string => name !== undefined)
    .sort();
}

describe('README Configuration table', () => {
  it('lists exactly the variables src/config.ts reads, plus the ones libraries read', () => {
    const documented = variablesInReadmeTable();
    const read = variablesReadByConfig();
    expect(read.length).toBeGreaterThan(20);
    expect(read.filter((name) => !documented.includes(name))).toEqual([]);
    expect(documented.filter((name) => !read.includes(name) && !READ_BY_LIBRARIES.includes(name))).toEqual([]);
  });

  it('holds configuration only: every row is a variable, its default and its meaning (no test evidence)', () => {
    const rows = configurationRows();
    expect(rows.length).toBeGreaterThan(20);
    expect(rows.filter((row) => !/^\| `[A-Z][A-Z0-9_]*` \| [^|]* \| .+ \|$/.test(row))).toEqual([]);
  });

  it('lists each variable once', () => {
    const documented = variablesInReadmeTable();
    expect(documented.filter((name, index) => documented.indexOf(name) !== index)).toEqual([]);
  });
});
