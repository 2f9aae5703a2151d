import { ProtocolError, ProtocolErrorCode, type CallToolResult } from '@modelcontextprotocol/server';
import { CircuitVersion, type User } from '../models';
import { CircuitRun } from '../models/CircuitRun';
import type { RunError } from '../domain/runs';
import type { ApiServices } from '../graphql/context';
import { endedRunResult } from './call-tool';
import { cancelOwnRun } from './inflight-calls';
import { answerableRun, deliverAnswers, inputRequestsFor, type InputRequests } from './run-input';
import { TASK_POLL_INTERVAL_MS } from './tasks';

/**
 * The `io.modelcontextprotocol/tasks` extension (protocol 2026-07-28; docs/mcp.md): a `tools/call` of a
 * client that declares the extension answers at once with a task whose id IS the run's uid. `tasks/get`
 * reads the run (its waits as `input_required` with their elicitations, its end as the call's result),
 * `tasks/update` delivers the client's answers as signals or decisions, `tasks/cancel` is the run's
 * cancel. No task store: any API process answers any task, for as long as the run exists.
 */

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export interface ModernTask {
  taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'cancelled' | 'failed';
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: null;
  pollIntervalMs: number;
  inputRequests?: InputRequests;
  result?: CallToolResult;
}

const iso = (value: Date | string | null | undefined): string | undefined =>
  value ? new Date(value).toISOString() : undefined;

/** The run as a task, without the result or input requests a `tasks/get` adds. */
function taskBase(run: CircuitRun): ModernTask {
  const createdAt = iso(run.created_at)!;
  const lastUpdatedAt = iso(run.ended_at) ?? iso(run.cancel_requested_at) ?? iso(run.started_at) ?? createdAt;
  const base = { taskId: run.uid, createdAt, lastUpdatedAt, ttlMs: null, pollIntervalMs: TASK_POLL_INTERVAL_MS };
  const error = (run.error ?? null) as RunError | null;
  // An EXCEPTION run is a tool result with isError (`completed`): `failed` is for protocol errors only.
  if (run.state === 'COMPLETED') return { ...base, status: 'completed' };
  if (run.state === 'EXCEPTION') {
    if (error?.code === 'Canceled') return { ...base, status: 'cancelled', statusMessage: error.message };
    return { ...base, status: 'completed', statusMessage: `${error?.code ?? 'Internal'}: ${error?.message ?? ''}` };
  }
  if (run.cancel_requested_at) return { ...base, status: 'cancelled', statusMessage: 'the run is being cancelled' };
  return { ...base, status: 'working', statusMessage: run.state === 'PROVISIONED' ? 'queued' : 'running' };
}

/** The task of a run just created (`resultType: "task"`). */
export function createdTask(run: CircuitRun): ModernTask & { resultType: 'task' } {
  return { resultType: 'task', ...taskBase(run) };
}

async function ownRun(viewer: User, taskId: unknown): Promise<CircuitRun> {
  const run = await answerableRun(viewer, taskId);
  if (!run) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task not found: ${String(taskId).slice(0, 100)}`);
  return run;
}

/** `tasks/get`: the run's state; its waits as `input_required`, its end with the call's result. */
export async function getModernTask(services: ApiServices, viewer: User, taskId: unknown): Promise<ModernTask> {
  const run = await ownRun(viewer, taskId);
  const task = taskBase(run);
  if (task.status === 'completed') {
    const version = await CircuitVersion.findByPk(run.circuit_version_uid, { attributes: ['uid', 'definition'] });
    return { ...task, result: await endedRunResult(run.uid, version?.definition) };
  }
  if (task.status === 'working' && run.state === 'RUNNING') {
    const [waiting] = await services.runs.waitingSteps([run.uid]);
    const inputRequests = inputRequestsFor(waiting ?? []);
    if (Object.keys(inputRequests).length > 0)
      return { ...task, status: 'input_required', statusMessage: 'waiting for your answer', inputRequests };
  }
  return task;
}

/** `tasks/update`: the answers become the waiting steps' signals or decisions (refused ones leave them waiting). */
export async function updateModernTask(
  services: ApiServices,
  viewer: User,
  taskId: unknown,
  inputResponses: Record<string, unknown>,
): Promise<Record<string, never>> {
  const run = await ownRun(viewer, taskId);
  await deliverAnswers(services, run.uid, inputResponses);
  return {};
}

/** `tasks/cancel`: the run's cancel (a run that has ended is left as it is). */
export async function cancelModernTask(
  services: ApiServices,
  viewer: User,
  taskId: unknown,
): Promise<Record<string, never>> {
  const run = await ownRun(viewer, taskId);
  await cancelOwnRun(services, viewer, run.uid);
  return {};
}

/** Loads the run a created task names, with the columns a task shows. */
export async function taskRun(uid: string): Promise<CircuitRun | null> {
  return CircuitRun.findByPk(uid);
}
