/** Deletes run jobs that finished without failing from the PostgreSQL store, many per statement. */
export interface FinishedJobs {
  /** A job that succeeded (its row id): deleted with the next batch. */
  add(id: string): void;
  /** Deletes what is waiting now (at close). */
  flush(): Promise<void>;
}

export interface FinishedJobsOptions {
  query(text: string, values: unknown[]): Promise<unknown>;
  table: string;
  jobName: string;
  onError(error: Error): void;
  /** How long a finished job waits for others to share its DELETE. */
  delayMs?: number;
  maxBatch?: number;
}

/**
 * Replaces Agenda's own end of a run job (an UPDATE to unlock and date it, then a removal) with one
 * DELETE per batch of jobs. A DELETE that fails loses nothing: the job's row stays locked, its lock
 * expires, and the worker that takes it finds the run ended and finishes the job again.
 */
export function finishedJobs({
  query,
  table,
  jobName,
  onError,
  delayMs = 50,
  maxBatch = 500,
}: FinishedJobsOptions): FinishedJobs {
  let waiting: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = async () => {
    clearTimeout(timer);
    timer = undefined;
    if (waiting.length === 0) return;
    const ids = waiting;
    waiting = [];
    try {
      await query(`DELETE FROM ${table} WHERE name = $1 AND id = ANY($2::uuid[])`, [jobName, ids]);
    } catch (error) {
      onError(error as Error);
    }
  };
  return {
    add(id) {
      waiting.push(id);
      if (waiting.length >= maxBatch) void flush();
      else if (!timer) {
        timer = setTimeout(() => {
          void flush();
        }, delayMs);
        timer.unref();
      }
    },
    flush,
  };
}
