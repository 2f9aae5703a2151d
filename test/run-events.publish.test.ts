import { Client } from 'pg';
import pino from 'pino';
import { createPostgresRunEventBus, type RunEventBus, type RunStateEvent } from '../src/runs/events/bus';
import { createTestDatabase } from './support/database';

/**
 * The PostgreSQL run-event bus publishes from many places at once (cancels, run ends, step events of
 * runs whose state travels outside PostgreSQL): overlapping publishes must all arrive, without
 * handing a pg connection a query while it executes another (deprecated by pg, removed in pg 9),
 * and a dropped publishing connection must not lose the next publish.
 */
jest.setTimeout(30_000);

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let bus: RunEventBus;
/** Queries handed to a pg connection while it still had one in progress: what pg's deprecation notice warns of. */
let overlapping = 0;
const query = Client.prototype.query;

beforeAll(async () => {
  database = await createTestDatabase();
  bus = await createPostgresRunEventBus(database.url, pino({ level: 'silent' }));
  // Counted from the fields pg's own notice reads (a query in progress or queued on the same connection;
  // the public getters for them are deprecated too).
  jest.spyOn(Client.prototype, 'query').mockImplementation(function (
    this: Client & { _activeQuery?: unknown; _queryQueue?: unknown[] },
    ...args: unknown[]
  ) {
    if (this._activeQuery || (this._queryQueue?.length ?? 0) > 0) overlapping += 1;
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as never);
});
afterAll(async () => {
  jest.restoreAllMocks();
  await bus.close();
  await database.drop();
});

function collect(uid: string, count: number): Promise<RunStateEvent[]> {
  const seen: RunStateEvent[] = [];
  return new Promise((resolve) => {
    const stop = bus.subscribe(uid, (event) => {
      seen.push(event);
      if (seen.length === count) {
        stop();
        resolve(seen);
      }
    });
  });
}

test('100 publishes at once all arrive, and no connection is handed a query while it runs another', async () => {
  overlapping = 0;
  const uid = '00000000-0000-4000-8000-000000000001';
  const arrived = collect(uid, 100);
  await Promise.all(Array.from({ length: 100 }, (_, seq) => bus.publish({ uid, seq: seq + 1 })));
  const events = await arrived;
  expect(events.map((e) => e.seq).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  expect(overlapping).toBe(0);
});

test('after its publishing connections are killed, the next publish still arrives', async () => {
  const uid = '00000000-0000-4000-8000-000000000002';
  await bus.publish({ uid, seq: 0 });
  const admin = new Client({ connectionString: database.url });
  await admin.connect();
  const { rows } = await admin.query<{ killed: boolean }>(
    `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
      WHERE application_name = 'circuit-run-events-publish' AND datname = current_database()`,
  );
  await admin.end();
  expect(rows.length).toBeGreaterThan(0);
  // The pool learns of the loss when the socket closes; a publish racing it may fail, as any query would.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const arrived = collect(uid, 1);
  await bus.publish({ uid, state: 'COMPLETED' });
  expect(await arrived).toEqual([{ uid, state: 'COMPLETED' }]);
});
