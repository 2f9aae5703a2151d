import type { Migration } from './migration';

/**
 * Version aliases (docs/releases.md). `circuit_aliases` holds each alias's current route set
 * (`routes`: `[{version_uid, weight}]`, weights summing to 100; checked by the set-circuit-alias
 * command, which alone writes both tables). `circuit_alias_history` keeps every route set an alias had
 * before its current one: `set_at` is when it was put, `replaced_at` when a later PUT replaced it.
 * Deleting an alias deletes its history. `circuit_runs.alias`: the alias a run's version was drawn
 * from; null for runs that named their version or ran the primary one.
 */
export const circuitAliases: Migration = {
  name: '0019-circuit-aliases',
  up: `
CREATE TABLE circuit_aliases (
  circuit_uid uuid NOT NULL REFERENCES circuits(uid) ON DELETE CASCADE,
  name text NOT NULL CHECK (name ~ '^[a-z][a-z0-9-]{0,31}$'),
  routes jsonb NOT NULL CHECK (jsonb_typeof(routes) = 'array'),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (circuit_uid, name)
);
CREATE TABLE circuit_alias_history (
  uid uuid PRIMARY KEY,
  circuit_uid uuid NOT NULL,
  name text NOT NULL,
  routes jsonb NOT NULL,
  set_at timestamptz NOT NULL,
  replaced_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (circuit_uid, name) REFERENCES circuit_aliases(circuit_uid, name) ON DELETE CASCADE
);
CREATE INDEX circuit_alias_history_by_alias_idx ON circuit_alias_history (circuit_uid, name, replaced_at DESC);
ALTER TABLE circuit_runs ADD COLUMN alias text;
`,
  down: `
ALTER TABLE circuit_runs DROP COLUMN alias;
DROP TABLE circuit_alias_history;
DROP TABLE circuit_aliases;
`,
};
