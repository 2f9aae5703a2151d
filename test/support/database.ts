import crypto from 'node:crypto';
import { Client } from 'pg';

function adminUrl(): string {
  const url = process.env.TEST_PG_ADMIN_URL;
  if (!url) throw new Error('TEST_PG_ADMIN_URL is unset: run tests through jest (global setup)');
  return url;
}

export function databaseUrl(name: string): string {
  const parsed = new URL(adminUrl());
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** A fresh, migrated database cloned from the template; `drop()` removes it. */
export async function createTestDatabase(): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `t_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: adminUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${process.env.TEST_PG_TEMPLATE}`);
  await admin.end();
  return {
    name,
    url: databaseUrl(name),
    drop: async () => {
      const client = new Client({ connectionString: adminUrl() });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
