// Shared by the search scenarios: 100,000 circuits and 10,000 users seeded with bulk SQL from a fixed
// word list (names `word-word-N`, descriptions of 8 words; 10 % private), deterministic (setseed).
const COMMON = 'model'; // in every 10th circuit's description (10,000 circuits, ~9,000 of them public)
const RARE = 'zyzzyva'; // in 3 circuits

const WORDS = `alpha amber anchor apple arrow atlas audio aurora autumn badge bamboo banner basil beacon berry
bison blaze bloom breeze bridge bronze bubble cactus camera candle canyon carbon castle cedar chalk chart
cherry cipher citrus clay cloud clover cobalt comet copper coral cosmos cotton crane crystal cube delta
desert dingo dragon drift dune eagle echo ember emerald engine falcon feather fern fiber flame flint
forest fossil fox frost galaxy garden garnet gecko glacier globe granite graph harbor hazel helix heron
honey horizon iris island ivory jade jaguar jasmine jungle kernel kite lagoon lantern laser lemon lily
linen lotus lunar magnet mango maple marble meadow meteor mint mirror moss nebula nectar nickel noble
oasis ocean olive onyx opal orbit orchid otter palm panda paper pearl pepper pixel planet plasma plum
polar prism pulse quartz quill radar rain raven reef ridge river robin ruby saffron sage sand sapphire
scarlet shadow shell sierra silver sky slate solar spark spice spruce storm summit sun swift tango
thistle thunder tiger timber topaz torch tulip tundra velvet violet vortex walnut wave willow wind
winter wolf zenith zephyr`
  .split(/\s+/)
  .filter(Boolean);

/** Seeds `circuits` users and circuits into the (migrated, empty but for fixtures) database at `url`. */
async function seedSearch(url, { circuits = 100_000, users = 10_000 } = {}) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: url });
  await client.connect();
  const started = Date.now();
  try {
    await client.query('SELECT setseed(0.42)');
    await client.query(
      `INSERT INTO users (uid, username, name, bio, is_private)
       SELECT gen_random_uuid(), 'user' || g,
              initcap(w[1 + floor(random() * n)::int]) || ' ' || initcap(w[1 + floor(random() * n)::int]),
              array_to_string(ARRAY(SELECT w[1 + floor(random() * n)::int] FROM generate_series(1, 5) k WHERE g > 0), ' '),
              random() < 0.1
         FROM generate_series(1, $2::int) g, (SELECT $1::text[] AS w, cardinality($1::text[]) AS n) words`,
      [WORDS, users],
    );
    await client.query(
      `INSERT INTO circuits (uid, owner_uid, name, description, is_private)
       SELECT gen_random_uuid(), o.uids[1 + (g % cardinality(o.uids))],
              w[1 + floor(random() * n)::int] || '-' || w[1 + floor(random() * n)::int] || '-' || g,
              initcap(array_to_string(ARRAY(SELECT w[1 + floor(random() * n)::int] FROM generate_series(1, 8) k WHERE g > 0), ' '))
                || CASE WHEN g % 10 = 0 THEN ' ${COMMON}' ELSE '' END
                || CASE WHEN g % 33333 = 0 THEN ' ${RARE}' ELSE '' END,
              random() < 0.1
         FROM generate_series(1, $2::int) g,
              (SELECT $1::text[] AS w, cardinality($1::text[]) AS n) words,
              (SELECT array_agg(uid ORDER BY username) AS uids FROM users WHERE username LIKE 'user%') o`,
      [WORDS, circuits],
    );
    await client.query('VACUUM ANALYZE users');
    await client.query('VACUUM ANALYZE circuits');
    // The one-word path reads search_postings index only (migration 0030), as it will once autovacuum has
    // set the visibility map of a table this large; the seed vacuums it as it does the others.
    if ((await client.query("SELECT to_regclass('search_postings') IS NOT NULL AS present")).rows[0].present) {
      await client.query('VACUUM ANALYZE search_postings');
    }
    const seededIn = Date.now() - started;
    const counts = (
      await client.query(
        `SELECT (SELECT count(*) FROM circuits) AS circuits, (SELECT count(*) FROM users) AS users,
              (SELECT count(*) FROM circuits WHERE NOT is_private AND search_vector @@ to_tsquery('simple', '${COMMON}:*')) AS common,
              (SELECT count(*) FROM circuits WHERE NOT is_private AND search_vector @@ to_tsquery('simple', '${RARE}:*')) AS rare`,
      )
    ).rows[0];
    return { seededIn, counts };
  } finally {
    await client.end();
  }
}

module.exports = { WORDS, COMMON, RARE, seedSearch };
