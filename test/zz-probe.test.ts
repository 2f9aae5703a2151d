const t0 = Date.now();
import { startTestApp } from './support/app';
import { createTestDatabase } from './support/database';
const t1 = Date.now();
test('probe', async () => {
  const a = Date.now();
  const db = await createTestDatabase();
  const b = Date.now();
  await db.drop();
  const c = Date.now();
  const t = await startTestApp();
  const d = Date.now();
  await t.close();
  const e = Date.now();
  console.log(`import ${t1 - t0} ms; create db ${b - a}; drop ${c - b}; startTestApp ${d - c}; close ${e - d}`);
});
