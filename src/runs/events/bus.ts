import { Pool } from 'pg';
import type { Logger } from '../../logger';
import { listen } from '../../db/listen';
import type { RunState } from '../../domain/runs';

/**
 * A message about one run. Subscribers re-read what they need: `state` when it changed state, `seq`
 * when events up to it were appended to its log, `cancel` when its owner asked to stop it (heard by
 * the worker running it), `wake` when one of its approval steps was decided (heard by the worker
 * running it, which re-reads its waiting steps).
 */
export interface RunStateEvent {
  uid: string;
  state?: RunState;
  seq?: number;
  cancel?: boolean;
  wake?: boolean;
}

export type RunEventHandler = (event: RunStateEvent) => void;

/**
 * Run messages across processes: a worker publishes, every process hears it and hands it to its local
 * subscribers (the run event stream behind REST SSE and the GraphQL subscriptions, waits, and the
 * worker running a canceled run).
 */
export interface RunEventBus {
  readonly kind: 'postgres' | 'redis';
  /**
   * The PostgreSQL NOTIFY channel when events travel over the service's own database: state
   * transitions then notify inside their own statement (delivered on commit, no extra round trip)
   * instead of calling publish().
   */
  readonly sqlChannel?: string;
  publish(event: RunStateEvent): Promise<void>;
  /** Local subscription to one run's events; returns the unsubscribe function. */
  subscribe(uid: string, handler: RunEventHandler): () => void;
  close(): Promise<void>;
}

export const RUN_STATE_CHANNEL = 'circuit_run_state';
const CHANNEL = RUN_STATE_CHANNEL;

/** Fans events heard from the transport out to local handlers and the GraphQL pubSub. */
class LocalFanOut {
  private readonly handlers = new Map<string, Set<RunEventHandler>>();

  constructor(private readonly log: Logger) {}

  deliver(raw: string): void {
    let event: RunStateEvent;
    try {
      event = JSON.parse(raw) as RunStateEvent;
    } catch {
      this.log.warn({ raw }, 'ignoring malformed run-state event');
      return;
    }
    for (const handler of this.handlers.get(event.uid) ?? []) {
      try {
        handler(event);
      } catch (error) {
        this.log.error({ err: error }, 'run-state subscriber failed');
      }
    }
  }

  subscribe(uid: string, handler: RunEventHandler): () => void {
    let set = this.handlers.get(uid);
    if (!set) this.handlers.set(uid, (set = new Set()));
    set.add(handler);
    return () => {
      set.delete(handler);
      if (set.size === 0 && this.handlers.get(uid) === set) this.handlers.delete(uid);
    };
  }
}

/** PostgreSQL LISTEN/NOTIFY on a dedicated connection; reconnects when it drops. */
export async function createPostgresRunEventBus(databaseUrl: string, log: Logger): Promise<RunEventBus> {
  const fanOut = new LocalFanOut(log);

  const listener = await listen({
    databaseUrl,
    channel: CHANNEL,
    applicationName: 'circuit-run-events',
    log,
    onNotification: (payload) => {
      if (payload) fanOut.deliver(payload);
    },
  });

  // A pool, not one Client: publishes overlap (cancels, run ends), and a pool queues them and replaces
  // a connection that dropped. One Client would be handed a query while still executing the last one,
  // which pg deprecates (removed in pg 9).
  const publisher = new Pool({ connectionString: databaseUrl, max: 2, application_name: 'circuit-run-events-publish' });
  publisher.on('error', (error) => log.warn({ err: error }, 'run-event publisher connection lost'));

  return {
    kind: 'postgres',
    sqlChannel: CHANNEL,
    async publish(event) {
      await publisher.query('SELECT pg_notify($1, $2)', [CHANNEL, JSON.stringify(event)]);
    },
    subscribe: (uid, handler) => fanOut.subscribe(uid, handler),
    async close() {
      await Promise.all([listener.close(), publisher.end().catch(() => {})]);
    },
  };
}

/** Redis pub/sub (REDIS_URL): the same events for deployments that already run Redis. */
export async function createRedisRunEventBus(redisUrl: string, log: Logger): Promise<RunEventBus> {
  const { Redis } = await import('ioredis');
  const fanOut = new LocalFanOut(log);
  const options = { lazyConnect: true, maxRetriesPerRequest: 3 };
  const subscriber = new Redis(redisUrl, options);
  const publisher = new Redis(redisUrl, options);
  for (const client of [subscriber, publisher])
    client.on('error', (error: Error) => log.warn({ err: error }, 'run-event redis error'));
  await Promise.all([subscriber.connect(), publisher.connect()]);
  subscriber.on('message', (channel: string, message: string) => {
    if (channel === CHANNEL) fanOut.deliver(message);
  });
  await subscriber.subscribe(CHANNEL);
  return {
    kind: 'redis',
    async publish(event) {
      await publisher.publish(CHANNEL, JSON.stringify(event));
    },
    subscribe: (uid, handler) => fanOut.subscribe(uid, handler),
    async close() {
      subscriber.disconnect();
      publisher.disconnect();
    },
  };
}

export function createRunEventBus(options: {
  databaseUrl: string;
  redisUrl?: string;
  log: Logger;
}): Promise<RunEventBus> {
  return options.redisUrl
    ? createRedisRunEventBus(options.redisUrl, options.log)
    : createPostgresRunEventBus(options.databaseUrl, options.log);
}
