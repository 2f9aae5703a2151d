import type { Migration } from './migration';

/**
 * Search is PostgreSQL's alone (docs/search.md): the in-process index that 0016's notifications named
 * rows for is gone, and the per-process page cache only needs to hear that something changed.
 * - `search_changed` carries no payload again, so that a statement touching many rows, or a
 *   transaction of many statements, is delivered once (PostgreSQL folds identical notifications of a
 *   transaction). Inserts and deletes notify per statement without transition tables; updates per
 *   row, only when a searched column really changed (a star count or a credit balance never does).
 * - The GIN indexes lose their pending list (`fastupdate`): every search scanned that unsorted list
 *   whole until a vacuum merged it (3,000 circuits inserted since: +0.5 ms of database CPU per search,
 *   and the list may grow to gin_pending_list_limit, 4 MB, ten times that). A write now pays its
 *   index entries at once instead.
 */
export const searchInPostgres: Migration = {
  name: '0026-search-in-postgres',
  up: `
DROP TRIGGER circuits_search_inserted ON circuits;
DROP TRIGGER circuits_search_deleted ON circuits;
DROP TRIGGER circuits_search_updated ON circuits;
DROP TRIGGER users_search_inserted ON users;
DROP TRIGGER users_search_deleted ON users;
DROP TRIGGER users_search_updated ON users;
DROP FUNCTION search_rows_changed_notify();
DROP FUNCTION search_row_changed_notify();

CREATE TRIGGER circuits_search_changed AFTER INSERT OR DELETE ON circuits
  FOR EACH STATEMENT EXECUTE FUNCTION search_changed_notify();
CREATE TRIGGER circuits_search_updated AFTER UPDATE OF name, description, is_private, owner_uid, search_vector ON circuits
  FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.description IS DISTINCT FROM NEW.description
    OR OLD.is_private IS DISTINCT FROM NEW.is_private OR OLD.owner_uid IS DISTINCT FROM NEW.owner_uid
    OR OLD.search_vector IS DISTINCT FROM NEW.search_vector)
  EXECUTE FUNCTION search_changed_notify();
CREATE TRIGGER users_search_changed AFTER INSERT OR DELETE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION search_changed_notify();
CREATE TRIGGER users_search_updated AFTER UPDATE OF username, name, bio, is_private ON users
  FOR EACH ROW WHEN (OLD.username IS DISTINCT FROM NEW.username OR OLD.name IS DISTINCT FROM NEW.name
    OR OLD.bio IS DISTINCT FROM NEW.bio OR OLD.is_private IS DISTINCT FROM NEW.is_private)
  EXECUTE FUNCTION search_changed_notify();

ALTER INDEX circuits_search_idx SET (fastupdate = off);
ALTER INDEX users_search_idx SET (fastupdate = off);
SELECT gin_clean_pending_list('circuits_search_idx'::regclass);
SELECT gin_clean_pending_list('users_search_idx'::regclass);
`,
  down: `
ALTER INDEX users_search_idx RESET (fastupdate);
ALTER INDEX circuits_search_idx RESET (fastupdate);
DROP TRIGGER users_search_updated ON users;
DROP TRIGGER users_search_changed ON users;
DROP TRIGGER circuits_search_updated ON circuits;
DROP TRIGGER circuits_search_changed ON circuits;
CREATE FUNCTION search_rows_changed_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  uids text[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(uid::text) INTO uids FROM (SELECT uid FROM new_rows LIMIT 101) r;
  ELSE
    SELECT array_agg(uid::text) INTO uids FROM (SELECT uid FROM old_rows LIMIT 101) r;
  END IF;
  IF uids IS NOT NULL THEN
    PERFORM pg_notify('search_changed', TG_ARGV[0] || ':' ||
      CASE WHEN cardinality(uids) > 100 THEN '*' ELSE array_to_string(uids, ',') END);
  END IF;
  RETURN NULL;
END $$;
CREATE FUNCTION search_row_changed_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('search_changed', TG_ARGV[0] || ':' || NEW.uid);
  RETURN NULL;
END $$;
CREATE TRIGGER circuits_search_inserted AFTER INSERT ON circuits
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION search_rows_changed_notify('c');
CREATE TRIGGER circuits_search_deleted AFTER DELETE ON circuits
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION search_rows_changed_notify('c');
CREATE TRIGGER circuits_search_updated AFTER UPDATE OF name, description, is_private, owner_uid, search_vector ON circuits
  FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.description IS DISTINCT FROM NEW.description
    OR OLD.is_private IS DISTINCT FROM NEW.is_private OR OLD.owner_uid IS DISTINCT FROM NEW.owner_uid
    OR OLD.search_vector IS DISTINCT FROM NEW.search_vector)
  EXECUTE FUNCTION search_row_changed_notify('c');
CREATE TRIGGER users_search_inserted AFTER INSERT ON users
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION search_rows_changed_notify('u');
CREATE TRIGGER users_search_deleted AFTER DELETE ON users
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION search_rows_changed_notify('u');
CREATE TRIGGER users_search_updated AFTER UPDATE OF username, name, bio, is_private ON users
  FOR EACH ROW WHEN (OLD.username IS DISTINCT FROM NEW.username OR OLD.name IS DISTINCT FROM NEW.name
    OR OLD.bio IS DISTINCT FROM NEW.bio OR OLD.is_private IS DISTINCT FROM NEW.is_private)
  EXECUTE FUNCTION search_row_changed_notify('u');
`,
};
