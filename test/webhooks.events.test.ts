import { Client } from 'pg';
import { WEBHOOK_EVENTS } from '../src/domain/webhook-events';
import { createTestDatabase } from './support/database';

/**
 * WEBHOOK_EVENTS (src/domain/webhook-events.ts) is the one list of events; the database keeps its own copy
 * in the CHECK on webhook_deliveries.event, which a migration wrote once and no code derives. A new event
 * fails here until a new migration replaces that CHECK (migrations are never edited).
 */
test('the CHECK on webhook_deliveries.event of a migrated database allows exactly WEBHOOK_EVENTS', async () => {
  const database = await createTestDatabase();
  const client = new Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ definition: string }>(`
      SELECT pg_get_constraintdef(c.oid) AS definition
        FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY (c.conkey)
       WHERE c.conrelid = 'webhook_deliveries'::regclass AND c.contype = 'c' AND a.attname = 'event'`);
    expect(rows).toHaveLength(1);
    // e.g. CHECK ((event = ANY (ARRAY['start'::text, 'step'::text, 'completed'::text])))
    const allowed = [...rows[0].definition.matchAll(/'((?:[^']|'')*)'::text/g)].map((match) =>
      match[1].replace(/''/g, "'"),
    );
    expect(allowed.sort()).toEqual([...WEBHOOK_EVENTS].sort());
  } finally {
    await client.end();
    await database.drop();
  }
});
