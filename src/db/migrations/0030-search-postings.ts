import type { Migration } from './migration';

/**
 * One-word searches rank from a btree instead of the heap (docs/search.md, "How it works", step 4).
 * `search_postings` holds one row per word of every public circuit's and public profile's search vector:
 * the word, the row, the row's `ts_rank` against that word alone, and its sort name. A search for one word
 * that stands for exactly one known word (`amber`, or the prefix `amb` when `amber` is the only word it
 * begins) reads its best matches in ranking order from `search_postings_ranked_idx`, index only: no GIN
 * bitmap of all its matches, no heap row, no `ts_rank`, no sort of the candidates. Every other search keeps
 * the GIN path. The rank is exact: for a vector holding one word that begins with the prefix, ts_rank
 * against the prefix and against that word run the same arithmetic.
 * Kept by triggers like `search_lexemes`: inserts and deletes per statement (transition tables, so a bulk
 * insert is one INSERT … SELECT), updates per row and only when the vector, the sort name or the privacy
 * changed; a private row has no postings. A username change recomputes its circuits' vectors (0003), which
 * refreshes their postings through the circuits' update trigger.
 */
const kinds = [
  { table: 'circuits', kind: 'c', sortName: 'name' },
  { table: 'users', kind: 'u', sortName: 'username' },
];

export const searchPostings: Migration = {
  name: '0030-search-postings',
  up: `
CREATE TABLE search_postings (
  kind "char" NOT NULL,
  word text COLLATE "C" NOT NULL,
  uid uuid NOT NULL,
  rank real NOT NULL,
  sort_name text NOT NULL,
  PRIMARY KEY (kind, word, uid)
);
CREATE INDEX search_postings_ranked_idx ON search_postings (word, rank DESC, sort_name COLLATE "C", uid) INCLUDE (kind);

-- ts_rank of a vector against one exact word (the word quoted as a tsquery lexeme).
CREATE FUNCTION search_word_rank(v tsvector, word text) RETURNS real LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT ts_rank(v, ('''' || replace(replace(word, '\\', '\\\\'), '''', '''''') || '''')::tsquery) $$;
${kinds
  .map(
    ({ table, kind, sortName }) => `
CREATE FUNCTION ${table}_search_postings_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO search_postings (kind, word, uid, rank, sort_name)
  SELECT '${kind}', l.word, n.uid, search_word_rank(n.search_vector, l.word), n.${sortName}
    FROM new_rows n CROSS JOIN LATERAL unnest(tsvector_to_array(n.search_vector)) AS l(word)
   WHERE NOT n.is_private;
  RETURN NULL;
END $$;
CREATE FUNCTION ${table}_search_postings_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM search_postings p
   USING old_rows o CROSS JOIN LATERAL unnest(tsvector_to_array(o.search_vector)) AS l(word)
   WHERE NOT o.is_private AND p.kind = '${kind}' AND p.word = l.word AND p.uid = o.uid;
  RETURN NULL;
END $$;
CREATE FUNCTION ${table}_search_postings_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT OLD.is_private THEN
    DELETE FROM search_postings WHERE kind = '${kind}' AND word = ANY (tsvector_to_array(OLD.search_vector)) AND uid = OLD.uid;
  END IF;
  IF NOT NEW.is_private THEN
    INSERT INTO search_postings (kind, word, uid, rank, sort_name)
    SELECT '${kind}', l.word, NEW.uid, search_word_rank(NEW.search_vector, l.word), NEW.${sortName}
      FROM unnest(tsvector_to_array(NEW.search_vector)) AS l(word);
  END IF;
  RETURN NULL;
END $$;
CREATE FUNCTION ${table}_search_postings_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM search_postings WHERE kind = '${kind}';
  RETURN NULL;
END $$;
CREATE TRIGGER ${table}_search_postings_insert AFTER INSERT ON ${table}
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${table}_search_postings_inserted();
CREATE TRIGGER ${table}_search_postings_delete AFTER DELETE ON ${table}
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${table}_search_postings_deleted();
CREATE TRIGGER ${table}_search_postings_update AFTER UPDATE ON ${table}
  FOR EACH ROW WHEN (OLD.search_vector IS DISTINCT FROM NEW.search_vector OR OLD.is_private IS DISTINCT FROM NEW.is_private
    OR OLD.${sortName} IS DISTINCT FROM NEW.${sortName} OR OLD.uid IS DISTINCT FROM NEW.uid)
  EXECUTE FUNCTION ${table}_search_postings_updated();
CREATE TRIGGER ${table}_search_postings_truncate AFTER TRUNCATE ON ${table}
  FOR EACH STATEMENT EXECUTE FUNCTION ${table}_search_postings_truncated();

INSERT INTO search_postings (kind, word, uid, rank, sort_name)
SELECT '${kind}', l.word, t.uid, search_word_rank(t.search_vector, l.word), t.${sortName}
  FROM ${table} t CROSS JOIN LATERAL unnest(tsvector_to_array(t.search_vector)) AS l(word)
 WHERE NOT t.is_private;
`,
  )
  .join('')}
ANALYZE search_postings;
`,
};
