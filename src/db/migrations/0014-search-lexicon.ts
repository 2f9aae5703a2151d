import type { Migration } from './migration';

/**
 * Every lexeme of the searchable vectors (circuits and users), so that search can expand a prefix
 * (`'riv':*`) into the words it stands for (`'river' | 'rivet'`): GIN answers exact lexemes from
 * their posting lists, but a prefix by collecting every matching entry into a bitmap first, which
 * was most of an uncached search's database time (src/graphql/search/search.query.ts).
 *
 * Kept complete by statement-level triggers on insert (one INSERT per statement, so bulk inserts stay
 * cheap) and row-level ones on update that fire only when the row's vector changed (a run's credit hold
 * or charge updates its user's row and must not pay for this);
 * never pruned: a word no longer used only expands into a lexeme that matches nothing. `C` collation,
 * so a prefix is a range of the primary key in byte order, as GIN compares lexemes.
 */
export const searchLexicon: Migration = {
  name: '0014-search-lexicon',
  up: `
CREATE TABLE search_lexemes (word text COLLATE "C" PRIMARY KEY);

CREATE FUNCTION search_lexemes_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_lexemes (word)
    SELECT DISTINCT unnest(tsvector_to_array(n.search_vector)) FROM new_rows n
    ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

CREATE TRIGGER circuits_search_lexemes_insert AFTER INSERT ON circuits
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION search_lexemes_add();
CREATE FUNCTION search_lexemes_add_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_lexemes (word) SELECT unnest(tsvector_to_array(NEW.search_vector)) ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

CREATE TRIGGER circuits_search_lexemes_update AFTER UPDATE ON circuits
  FOR EACH ROW WHEN (OLD.search_vector IS DISTINCT FROM NEW.search_vector) EXECUTE FUNCTION search_lexemes_add_changed();
CREATE TRIGGER users_search_lexemes_insert AFTER INSERT ON users
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION search_lexemes_add();
CREATE TRIGGER users_search_lexemes_update AFTER UPDATE ON users
  FOR EACH ROW WHEN (OLD.search_vector IS DISTINCT FROM NEW.search_vector) EXECUTE FUNCTION search_lexemes_add_changed();

INSERT INTO search_lexemes (word)
  SELECT unnest(tsvector_to_array(search_vector)) FROM circuits
  UNION SELECT unnest(tsvector_to_array(search_vector)) FROM users
  ON CONFLICT DO NOTHING;
`,
  down: `
DROP TRIGGER users_search_lexemes_update ON users;
DROP TRIGGER users_search_lexemes_insert ON users;
DROP TRIGGER circuits_search_lexemes_update ON circuits;
DROP TRIGGER circuits_search_lexemes_insert ON circuits;
DROP FUNCTION search_lexemes_add_changed();
DROP FUNCTION search_lexemes_add();
DROP TABLE search_lexemes;
`,
};
