import type { Migration } from './migration';

/**
 * `search_lexemes` rows are inserted in word order. Two transactions adding overlapping words (circuits
 * created at once by different users) each wait on the other's not yet committed word; in different
 * orders, each could hold a word the other waits for: a deadlock, answered 500. In one order, the later
 * one simply waits.
 */
export const searchLexemesInOrder: Migration = {
  name: '0039-search-lexemes-in-order',
  up: `
CREATE OR REPLACE FUNCTION search_lexemes_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_lexemes (word)
    SELECT DISTINCT w FROM new_rows n, unnest(tsvector_to_array(n.search_vector)) AS w ORDER BY w
    ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION search_lexemes_add_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_lexemes (word)
    SELECT DISTINCT w FROM unnest(tsvector_to_array(NEW.search_vector)) AS w ORDER BY w
    ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
`,
  down: `
CREATE OR REPLACE FUNCTION search_lexemes_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_lexemes (word)
    SELECT DISTINCT unnest(tsvector_to_array(n.search_vector)) FROM new_rows n
    ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION search_lexemes_add_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_lexemes (word) SELECT unnest(tsvector_to_array(NEW.search_vector)) ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
`,
};
