/**
 * A RETURNING column that lets the statement's transaction commit without waiting for its WAL flush
 * (`synchronous_commit = off`, for that transaction only). For the worker's steps of a run — claim,
 * event batches, heartbeat, a wait's start and end, a park, end — and nothing a client was promised: a crash of PostgreSQL itself may
 * roll back the last fraction of a second of them (never a part of one, never out of order), and the
 * recovery sweep then executes those runs again and charges them once. What it buys: these commits
 * hold the user's rows (charge, the running-slot count a pause gives back) and PostgreSQL's NOTIFY lock only while they execute, not through a
 * disk flush, so one user's runs no longer queue behind each other's fsyncs. The PostgreSQL job
 * store's connections commit the same way (src/queue/agenda.ts): a job row only mirrors its run, and
 * the recovery sweep, the webhook sweeper and the schedule reconciler redo what a crash rolls back.
 */
export const ASYNC_COMMIT_COLUMN = `set_config('synchronous_commit', 'off', true) AS async_commit`;
