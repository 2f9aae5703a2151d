import type { Migration } from './migration';

/**
 * Blobs and the web session store of the settings pages (connect-pg-simple's table,
 * named `web_sessions`).
 */
export const blobs: Migration = {
  name: '0004-blobs-web',
  up: `
CREATE TABLE blobs (
  uid uuid PRIMARY KEY,
  user_uid uuid NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  filename text NOT NULL DEFAULT '',
  hash text NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
  bytes bigint NOT NULL CHECK (bytes >= 0),
  mime_type text,
  blob_type text NOT NULL,
  bucket text NOT NULL,
  total_reads bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX blobs_user_created_idx ON blobs(user_uid, created_at DESC);

CREATE TABLE web_sessions (
  sid varchar NOT NULL PRIMARY KEY,
  sess json NOT NULL,
  expire timestamp(6) NOT NULL
);
CREATE INDEX web_sessions_expire_idx ON web_sessions(expire);
`,
  down: `
DROP TABLE IF EXISTS web_sessions;
DROP TABLE IF EXISTS blobs;
`,
};
