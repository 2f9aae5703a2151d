import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';

import { createTestDatabase } from './support/database';

/** docs/architecture.md promises a reader every piece of behaviour that lives in SQL. */
test('docs/architecture.md names every trigger of a migrated database and the function it runs', async () => {
  const database = await createTestDatabase();
  const client = new Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ trigger: string; table: string; fn: string }>(`
      SELECT t.tgname AS trigger, c.relname AS table, p.proname AS fn
        FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE NOT t.tgisinternal AND n.nspname = 'public'`);
    expect(rows.length).toBeGreaterThan(5);
    const doc = readFileSync(path.join(__dirname, '..', 'docs', 'architecture.md'), 'utf8');
    const missing = rows
      .filter((row) => !doc.includes(`\`${row.trigger}\``) || !doc.includes(`\`${row.fn}\``))
      .map((row) => `${row.table}.${row.trigger} → ${row.fn}()`);
    expect(missing).toEqual([]);
  } finally {
    await client.end();
    await database.drop();
  }
});
