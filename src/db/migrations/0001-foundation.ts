import type { Migration } from './migration';

export const foundation: Migration = {
  name: '0001-foundation',
  up: `
CREATE TABLE users (
  uid uuid PRIMARY KEY,
  username text NOT NULL UNIQUE CHECK (username ~ '^[a-z0-9][a-z0-9_-]{1,38}$'),
  name text NOT NULL DEFAULT '',
  bio text NOT NULL DEFAULT '',
  is_private boolean NOT NULL DEFAULT false,
  is_admin boolean NOT NULL DEFAULT false,
  credits bigint NOT NULL DEFAULT 0 CHECK (credits >= 0),
  password_hash text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_tokens (
  uid uuid PRIMARY KEY,
  user_uid uuid NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  label text NOT NULL DEFAULT '',
  last_used_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_tokens_user_idx ON api_tokens(user_uid);

CREATE TABLE circuit_metrics (
  uid uuid PRIMARY KEY,
  user_uid uuid NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name text NOT NULL,
  metrics jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE circuits (
  uid uuid PRIMARY KEY,
  owner_uid uuid NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  is_private boolean NOT NULL DEFAULT false,
  is_protected boolean NOT NULL DEFAULT false,
  license_type text,
  user_circuit_metric_uid uuid REFERENCES circuit_metrics(uid) ON DELETE SET NULL,
  is_deprecated boolean NOT NULL DEFAULT false,
  star_count integer NOT NULL DEFAULT 0,
  primary_version_uid uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (owner_uid, name)
);

CREATE TABLE circuit_adaptors (
  uid uuid PRIMARY KEY,
  circuit_uid uuid NOT NULL REFERENCES circuits(uid) ON DELETE CASCADE,
  kind text NOT NULL DEFAULT 'query',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX circuit_adaptors_circuit_idx ON circuit_adaptors(circuit_uid);

CREATE TABLE circuit_versions (
  uid uuid PRIMARY KEY,
  circuit_uid uuid NOT NULL REFERENCES circuits(uid) ON DELETE CASCADE,
  number integer NOT NULL,
  definition jsonb NOT NULL,
  is_deprecated boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (circuit_uid, number)
);
ALTER TABLE circuits ADD CONSTRAINT circuits_primary_version_fk
  FOREIGN KEY (primary_version_uid) REFERENCES circuit_versions(uid) DEFERRABLE INITIALLY DEFERRED;

-- One row per (embedding version, embedded circuit): what /embeds lists.
CREATE TABLE circuit_embeds (
  version_uid uuid NOT NULL REFERENCES circuit_versions(uid) ON DELETE CASCADE,
  circuit_uid uuid NOT NULL REFERENCES circuits(uid) ON DELETE CASCADE,
  embedded_circuit_uid uuid NOT NULL REFERENCES circuits(uid) ON DELETE CASCADE,
  PRIMARY KEY (version_uid, embedded_circuit_uid)
);
CREATE INDEX circuit_embeds_embedded_idx ON circuit_embeds(embedded_circuit_uid);

CREATE TABLE circuit_stars (
  user_uid uuid NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  circuit_uid uuid NOT NULL REFERENCES circuits(uid) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_uid, circuit_uid)
);
CREATE INDEX circuit_stars_circuit_idx ON circuit_stars(circuit_uid);
`,
};
