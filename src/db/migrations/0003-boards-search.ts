import type { Migration } from './migration';

/**
 * Boards (with memberships and stars), full-text search vectors and the shared rate-limit table.
 *
 * Search text is normalised the same way on both sides: ASCII punctuation becomes a space before
 * `to_tsvector('simple', …)`, and src/graphql/search/search.query.ts splits the query on anything
 * that is not a letter or digit. So "data.pipeline" and "hello_world" are found by each word.
 */
export const boards: Migration = {
  name: '0003-boards-search',
  up: `
CREATE TABLE boards (
  uid uuid PRIMARY KEY,
  owner_uid uuid NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  is_private boolean NOT NULL DEFAULT false,
  is_protected boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (owner_uid, name)
);

-- Removing a board or a membership never touches circuits: only these rows go.
CREATE TABLE board_circuits (
  board_uid uuid NOT NULL REFERENCES boards(uid) ON DELETE CASCADE,
  circuit_uid uuid NOT NULL REFERENCES circuits(uid) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (board_uid, circuit_uid)
);
CREATE INDEX board_circuits_circuit_idx ON board_circuits(circuit_uid);
CREATE INDEX board_circuits_board_created_idx ON board_circuits(board_uid, created_at DESC);

CREATE TABLE board_stars (
  user_uid uuid NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  board_uid uuid NOT NULL REFERENCES boards(uid) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_uid, board_uid)
);
CREATE INDEX board_stars_board_idx ON board_stars(board_uid);

-- Search text: ASCII punctuation splits words, like the query side does.
CREATE FUNCTION search_text(value text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT regexp_replace(coalesce(value, ''), '[!-/:-@\\[-\`{-~]+', ' ', 'g') $$;

-- Users: a generated column, so the database keeps it current.
ALTER TABLE users ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('simple'::regconfig, search_text(username)), 'A') ||
  setweight(to_tsvector('simple'::regconfig, search_text(name)), 'A') ||
  setweight(to_tsvector('simple'::regconfig, search_text(bio)), 'C')
) STORED;
CREATE INDEX users_search_idx ON users USING gin (search_vector) WHERE NOT is_private;
CREATE INDEX users_lower_name_idx ON users (lower(name)) WHERE NOT is_private;

-- Circuits: the owner's username lives in another table, so triggers keep the vector current.
CREATE FUNCTION circuit_search_vector(name text, description text, username text) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT
    setweight(to_tsvector('simple'::regconfig, search_text(name)), 'A') ||
    setweight(to_tsvector('simple'::regconfig, search_text(username)), 'B') ||
    setweight(to_tsvector('simple'::regconfig, search_text(description)), 'C') $$;

ALTER TABLE circuits ADD COLUMN search_vector tsvector;

CREATE FUNCTION circuits_search_vector_refresh() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.search_vector := circuit_search_vector(NEW.name, NEW.description,
    (SELECT username FROM users WHERE uid = NEW.owner_uid));
  RETURN NEW;
END $$;
CREATE TRIGGER circuits_search_vector_refresh
  BEFORE INSERT OR UPDATE OF name, description, owner_uid ON circuits
  FOR EACH ROW EXECUTE FUNCTION circuits_search_vector_refresh();

CREATE FUNCTION users_username_search_refresh() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE circuits SET search_vector = circuit_search_vector(name, description, NEW.username)
    WHERE owner_uid = NEW.uid;
  RETURN NULL;
END $$;
CREATE TRIGGER users_username_search_refresh
  AFTER UPDATE OF username ON users
  FOR EACH ROW WHEN (OLD.username IS DISTINCT FROM NEW.username)
  EXECUTE FUNCTION users_username_search_refresh();

UPDATE circuits c SET search_vector = circuit_search_vector(c.name, c.description, u.username)
  FROM users u WHERE u.uid = c.owner_uid;

-- Only public circuits are ever searched: the partial indexes hold nothing else.
CREATE INDEX circuits_search_idx ON circuits USING gin (search_vector) WHERE NOT is_private;
CREATE INDEX circuits_lower_name_idx ON circuits (lower(name)) WHERE NOT is_private;

-- Search results may be cached per process (src/graphql/search/search.cache.ts). Every statement that
-- changes searchable data sends NOTIFY search_changed (delivered on commit, once per transaction), and
-- each API process clears its cache when it hears it. Statement-level, so a bulk insert notifies once.
CREATE FUNCTION search_changed_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('search_changed', '');
  RETURN NULL;
END $$;
CREATE TRIGGER circuits_search_changed
  AFTER INSERT OR DELETE OR UPDATE OF name, description, is_private, owner_uid ON circuits
  FOR EACH STATEMENT EXECUTE FUNCTION search_changed_notify();
CREATE TRIGGER users_search_changed
  AFTER INSERT OR DELETE OR UPDATE OF username, name, bio, is_private ON users
  FOR EACH STATEMENT EXECUTE FUNCTION search_changed_notify();
CREATE TRIGGER circuits_search_changed_truncate AFTER TRUNCATE ON circuits
  FOR EACH STATEMENT EXECUTE FUNCTION search_changed_notify();
CREATE TRIGGER users_search_changed_truncate AFTER TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION search_changed_notify();

-- rate-limiter-flexible's RateLimiterPostgres table (created here, so the limiter uses tableCreated).
-- Unlogged: counters are worth losing on a crash rather than a WAL write per search.
CREATE UNLOGGED TABLE rate_limits (
  key varchar(255) PRIMARY KEY,
  points integer NOT NULL DEFAULT 0,
  expire bigint
);
`,
};
