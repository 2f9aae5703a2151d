import type { Migration } from './index';

/**
 * Search cache invalidation by LISTEN/NOTIFY instead of the `search_epoch` row of 0003.
 *
 * The epoch row was read by every search (one more round trip per request) and updated by every
 * statement that changed searchable data (which serialised all such writes on one row lock). Now the
 * same statements `NOTIFY search_changed` (delivered on commit, once per transaction), and each API
 * process clears its cache when it hears it (src/graphql/search/search.cache.ts).
 */
export const searchNotify: Migration = {
  name: '0005-search-notify',
  up: `
DROP TRIGGER IF EXISTS circuits_search_epoch ON circuits;
DROP TRIGGER IF EXISTS users_search_epoch ON users;
DROP TRIGGER IF EXISTS circuits_search_epoch_truncate ON circuits;
DROP TRIGGER IF EXISTS users_search_epoch_truncate ON users;
DROP FUNCTION IF EXISTS search_epoch_bump();
DROP TABLE IF EXISTS search_epoch;

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
`,
};
