import { Pool } from 'pg';
import { listen } from '../db/listen';
import type { Logger } from '../logger';

/**
 * An outbox for job stores outside PostgreSQL (MongoDB). The statement that inserts a run also
 * inserts its outbox row and NOTIFYs (src/runs/create-run.ts, through SqlEnqueue), so a run is
 * never accepted without a durable record that its job is due. A relay in every process with a run
 * queue moves rows into the job store at once (on the NOTIFY, and every second for anything missed,
 * e.g. while MongoDB was unreachable), deleting each row in the transaction that locked it, only
 * after the job store took the job. A relay that dies half way leaves its rows to the next one; the
 * job store's unique key on the run uid keeps that from queueing a run twice.
 */
export const OUTBOX_TABLE = 'run_job_outbox';
export const OUTBOX_CHANNEL = 'run_job_outbox';

/** The SqlEnqueue pieces (see src/queue/agenda.ts) that write the outbox instead of a job row. */
export function outboxSqlEnqueue(): { jobCte: string; notifyColumn: string } {
  return {
    jobCte: `INSERT INTO ${OUTBOX_TABLE} (run_uid) SELECT run.uid FROM run RETURNING run_uid`,
    notifyColumn: `pg_notify('${OUTBOX_CHANNEL}', job.run_uid::text)`,
  };
}

export interface OutboxRelay {
  /** Moves every waiting row now; resolves with how many moved. */
  drain(): Promise<number>;
  close(): Promise<void>;
}

export interface OutboxRelayOptions {
  databaseUrl: string;
  log: Logger;
  /** Queues these runs in the job store; must be idempotent per run uid. */
  enqueue(runUids: string[]): Promise<void>;
  everyMs?: number;
  batch?: number;
}

export async function startOutboxRelay({
  databaseUrl,
  log,
  enqueue,
  everyMs = 1_000,
  batch = 200,
}: OutboxRelayOptions): Promise<OutboxRelay> {
  const pool = new Pool({ connectionString: databaseUrl, max: 2, application_name: 'circuit-job-outbox' });
  pool.on('error', () => {
    /* an idle connection dropped (PostgreSQL restarting): the next drain reconnects */
  });
  let closed = false;
  let failing = false;

  const moveBatch = async (): Promise<number> => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ run_uid: string }>(
        `SELECT run_uid FROM ${OUTBOX_TABLE} ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [batch],
      );
      const uids = rows.map((row) => row.run_uid);
      if (uids.length > 0) {
        await enqueue(uids);
        await client.query(`DELETE FROM ${OUTBOX_TABLE} WHERE run_uid = ANY($1::uuid[])`, [uids]);
      }
      await client.query('COMMIT');
      return uids.length;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  };

  let running: Promise<number> | undefined;
  let again = false;
  const drain = (): Promise<number> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let moved = 0;
      try {
        do {
          again = false;
          let n: number;
          do {
            n = await moveBatch();
            moved += n;
          } while (n === batch);
        } while (again && !closed);
        if (failing) log.info('job outbox relay recovered');
        failing = false;
      } catch (error) {
        // One line per outage, not one per retry: the rows wait and the next tick tries again.
        if (!failing)
          log.warn(
            { error: error instanceof Error ? error.message : String(error) },
            'job outbox relay cannot move runs to the job store yet; retrying every second',
          );
        failing = true;
      } finally {
        running = undefined;
      }
      return moved;
    })();
    return running;
  };

  // Also drains on every (re)connect: anything inserted while not listening.
  const listening = await listen({
    databaseUrl,
    channel: OUTBOX_CHANNEL,
    applicationName: 'circuit-job-outbox-listen',
    log,
    onNotification: () => {
      void drain();
    },
    onListening: () => {
      void drain();
    },
  });
  const timer = setInterval(() => {
    void drain();
  }, everyMs);
  timer.unref();

  return {
    drain,
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
      await listening.close();
      await pool.end().catch(() => {});
    },
  };
}
