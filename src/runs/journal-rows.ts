import type { ApprovalDecision, JournalEntry, SignalReceipt } from '../engine/run-control';

/** A row of `circuit_run_steps` as the step journal reads it (src/runs/step-journal.ts). */
export interface StepRow {
  path: string;
  kind: string;
  status: JournalEntry['status'];
  output: unknown;
  credits: number | string;
  usage: JournalEntry['usage'] | null;
  started_at: Date | string;
  ended_at: Date | string | null;
  prompt: string | null;
  expires_at: Date | string | null;
  on_timeout: string | null;
  decision: ApprovalDecision | SignalReceipt | null;
}

export const STEP_COLUMNS =
  'path, kind, status, output, credits, usage, started_at, ended_at, prompt, expires_at, on_timeout, decision';

/**
 * The journal of the run whose uid is in `run`, as one JSON array of StepRow, for a statement that answers it
 * with the run (the claim: a run taken over or resumed needs it before its first step, one round trip less).
 */
export const JOURNAL_JSON_SQL = (run: string): string =>
  `(SELECT COALESCE(json_agg(s), '[]'::json) FROM (SELECT ${STEP_COLUMNS} FROM circuit_run_steps WHERE run_uid = ${run}) s)`;

const iso = (value: Date | string | null): string | undefined =>
  value === null ? undefined : new Date(value).toISOString();

export function entryOf(row: StepRow): JournalEntry {
  return {
    status: row.status,
    kind: row.kind,
    output: row.output,
    credits: Number(row.credits),
    ...(row.usage ? { usage: row.usage } : {}),
    started_at: iso(row.started_at)!,
    ...(row.ended_at ? { ended_at: iso(row.ended_at) } : {}),
    ...(row.prompt !== null ? { prompt: row.prompt } : {}),
    ...(row.expires_at ? { expires_at: iso(row.expires_at) } : {}),
    ...(row.decision ? { decision: row.decision } : {}),
  };
}

/** Rows of the journal by path. */
export function journalOf(rows: readonly StepRow[]): Map<string, JournalEntry> {
  return new Map(rows.map((row) => [row.path, entryOf(row)]));
}
