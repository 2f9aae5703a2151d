import type { CallToolResult, CreateTaskResult, GetTaskResult, Task } from '@modelcontextprotocol/sdk/types.js';
import { limitRunCreation } from '../ratelimit';
import { ErrorCode, McpError, RELATED_TASK_META_KEY } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../errors';
import { isUid } from '../ids';
import { CircuitVersion, type User } from '../models';
import { CircuitRun } from '../models/CircuitRun';
import { isTerminal, type RunError } from '../domain/runs';
import type { ApiServices } from '../graphql/context';
import { endedRunResult } from './call-tool';
import { cancelOwnRun } from './inflight-calls';
import type { CircuitTool } from './tools';

/**
 * MCP tasks (protocol 2025-11-25; docs/mcp.md): a
 * `tools/call` that carries `task` creates the run as any call does and answers at once with a task
 * whose id IS the run's uid. Nothing else is stored: `tasks/get` is the run's state, `tasks/result`
 * waits for the run's end on its event stream and answers what the plain call would have, and
 * `tasks/cancel` is the run's cancel. So any API process answers for any task, a task lives as long
 * as its run (ttl null), and a task is its caller's only (another user's run is "not found").
 */

/** How often a client should poll `tasks/get` (a hint; `tasks/result` waits without polling). */
export const TASK_POLL_INTERVAL_MS = 1_000;

type TaskRun = Pick<
  CircuitRun,
  'uid' | 'state' | 'error' | 'created_at' | 'started_at' | 'ended_at' | 'cancel_requested_at'
>;
const TASK_ATTRIBUTES = [
  'uid',
  'user_uid',
  'state',
  'error',
  'created_at',
  'started_at',
  'ended_at',
  'cancel_requested_at',
];

const iso = (value: Date | string | null | undefined): string | undefined =>
  value ? new Date(value).toISOString() : undefined;

/**
 * A run as a task. A run whose cancel was asked is `cancelled` from then on unless it COMPLETED
 * (the cancel came too late); an EXCEPTION run ended by a cancel is `cancelled`, any other `failed`.
 */
export function taskOf(run: TaskRun): Task {
  const error = (run.error ?? null) as RunError | null;
  const createdAt = iso(run.created_at)!;
  const lastUpdatedAt = iso(run.ended_at) ?? iso(run.cancel_requested_at) ?? iso(run.started_at) ?? createdAt;
  const base = { taskId: run.uid, ttl: null, createdAt, lastUpdatedAt, pollInterval: TASK_POLL_INTERVAL_MS };
  if (run.state === 'COMPLETED') return { ...base, status: 'completed' };
  if (run.state === 'EXCEPTION') {
    if (error?.code === 'Canceled') return { ...base, status: 'cancelled', statusMessage: error.message };
    return {
      ...base,
      status: 'failed',
      statusMessage: `${error?.code ?? 'Internal'}: ${error?.message ?? 'the run failed'}`,
    };
  }
  if (run.cancel_requested_at) return { ...base, status: 'cancelled', statusMessage: 'the run is being cancelled' };
  return { ...base, status: 'working', statusMessage: run.state === 'PROVISIONED' ? 'queued' : 'running' };
}

/** The caller's own run named by a task id; "not found" for anything else (no hint whether it exists). */
async function ownRun(viewer: User, taskId: string): Promise<CircuitRun> {
  const run = isUid(taskId)
    ? await CircuitRun.findByPk(taskId, { attributes: [...TASK_ATTRIBUTES, 'circuit_version_uid'] })
    : null;
  if (!run || run.user_uid !== viewer.uid)
    throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId.slice(0, 100)}`);
  return run;
}

/** `tools/call` with `task`: the run, created as a plain call creates it, as a task. Refusals are protocol errors here (a task result cannot carry them). */
export async function createToolTask(
  services: ApiServices,
  viewer: User,
  tool: CircuitTool,
  args: Record<string, unknown> | undefined,
  key: string,
): Promise<CreateTaskResult> {
  try {
    // The same per-token limit as a plain call, a REST or a GraphQL query.
    await limitRunCreation(services.runRateLimiter, viewer, {});
    const { run } = await services.runs.create(viewer, {
      adaptorUid: tool.adaptorUid,
      input: args ?? {},
      idempotencyKey: key,
    });
    services.log.debug({ run: run.uid, tool: tool.name }, 'mcp tool call started a run as a task');
    return { task: taskOf((await CircuitRun.findByPk(run.uid, { attributes: TASK_ATTRIBUTES })) ?? run) };
  } catch (error) {
    if (error instanceof AppError)
      throw new McpError(ErrorCode.InvalidParams, `${error.code}: ${error.message}`, { code: error.code });
    throw error;
  }
}

/** `tasks/get`. */
export async function getTask(viewer: User, taskId: string): Promise<GetTaskResult> {
  return taskOf(await ownRun(viewer, taskId));
}

/**
 * `tasks/result`: waits (on the run's event stream, holding no connection) until the run has ended,
 * then answers the call's result, tied to its task. A request closed meanwhile stops waiting only.
 */
export async function taskResult(
  services: ApiServices,
  viewer: User,
  taskId: string,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const run = await ownRun(viewer, taskId);
  if (!isTerminal(run.state)) {
    const stream = services.runs.stream(run.uid, { after: null, kinds: ['state'] });
    const stop = () => {
      void stream.return?.(undefined);
    };
    signal.addEventListener('abort', stop, { once: true });
    if (signal.aborted) stop();
    try {
      for await (const _event of stream) {
        /* until the terminal state has been read */
      }
    } finally {
      signal.removeEventListener('abort', stop);
    }
    if (signal.aborted) throw new McpError(ErrorCode.InvalidRequest, 'Request cancelled');
  }
  const version = await CircuitVersion.findByPk(run.circuit_version_uid, { attributes: ['uid', 'definition'] });
  const result = await endedRunResult(run.uid, version?.definition);
  return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId: run.uid } } };
}

/** `tasks/cancel`: the run's cancel (docs/runs.md, Cancel); a task already ended cannot be cancelled. */
export async function cancelTask(services: ApiServices, viewer: User, taskId: string): Promise<GetTaskResult> {
  const run = await ownRun(viewer, taskId);
  const task = taskOf(run);
  if (task.status !== 'working') {
    throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${task.status}`);
  }
  await cancelOwnRun(services, viewer, run.uid);
  return taskOf(await ownRun(viewer, taskId));
}
