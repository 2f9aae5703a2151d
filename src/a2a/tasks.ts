import { Role, TaskState, type Artifact, type Message, type Part, type Task, type TaskStatus } from './sdk';
import { CircuitRun } from '../models/CircuitRun';
import { isUid } from '../ids';
import type { User } from '../models';
import type { RunError } from '../domain/runs';
import type { WaitingStep } from '../runs';
import type { ApiServices } from '../graphql/context';
import { taskNotFound } from './errors';

/** What a task is read from: the run's row and the steps it waits on. */
export type TaskRun = Pick<
  CircuitRun,
  | 'uid'
  | 'user_uid'
  | 'is_public'
  | 'state'
  | 'error'
  | 'result_blob'
  | 'created_at'
  | 'started_at'
  | 'ended_at'
  | 'cancel_requested_at'
> & { circuit_version_uid: string };

const TASK_ATTRIBUTES = [
  'uid',
  'user_uid',
  'is_public',
  'state',
  'error',
  'result_blob',
  'created_at',
  'started_at',
  'ended_at',
  'cancel_requested_at',
  'circuit_version_uid',
];

export interface RunTask {
  run: TaskRun;
  /** The waits a person or a program can answer (approvals and signals), oldest first. */
  answerable: WaitingStep[];
}

export const textPart = (text: string): Part => ({
  content: { $case: 'text', value: text },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

export const dataPart = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});

const iso = (value: Date | string | null | undefined): string | undefined =>
  value ? new Date(value).toISOString() : undefined;

function agentMessage(run: TaskRun, id: string, parts: Part[]): Message {
  return {
    messageId: `${run.uid}:${id}`,
    contextId: run.uid,
    taskId: run.uid,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** What a waiting step asks for, in words and as data (its step id, kind, prompt, schema, expiry). */
function askFor(step: WaitingStep): Part[] {
  const words =
    step.kind === 'approval'
      ? `The run waits for an approval of step ${step.step_id}${step.prompt ? `: ${step.prompt}` : ''}. Answer on this task with a data part {"approved": true|false, "comment"?}.`
      : `The run waits for a signal to step ${step.step_id}. Answer on this task with the signal's data as a data part${step.schema ? ' matching the schema' : ''}.`;
  return [
    textPart(words),
    dataPart({
      step_id: step.step_id,
      kind: step.kind,
      ...(step.prompt ? { prompt: step.prompt } : {}),
      ...(step.schema ? { schema: step.schema } : {}),
      ...(step.expires_at ? { expires_at: iso(step.expires_at) } : {}),
    }),
  ];
}

/**
 * A run's state as a task's: PROVISIONED is submitted, RUNNING working, or input-required while it
 * waits on an approval or a signal; COMPLETED completed; EXCEPTION canceled when a cancel ended it,
 * else failed with its error code and message (the caller is the run's owner).
 */
export function statusOf({ run, answerable }: RunTask): TaskStatus {
  const error = (run.error ?? null) as RunError | null;
  const at = iso(run.ended_at) ?? iso(run.started_at) ?? iso(run.created_at);
  const status = (state: TaskState, message?: Message): TaskStatus => ({ state, message, timestamp: at });
  switch (run.state) {
    case 'COMPLETED':
      return status(TaskState.TASK_STATE_COMPLETED);
    case 'EXCEPTION':
      if (error?.code === 'Canceled')
        return status(TaskState.TASK_STATE_CANCELED, agentMessage(run, 'end', [textPart(error.message)]));
      return status(
        TaskState.TASK_STATE_FAILED,
        agentMessage(run, 'end', [
          textPart(`${error?.code ?? 'Internal'}: ${error?.message ?? 'the run failed'}`),
          dataPart(error ?? { code: 'Internal' }),
        ]),
      );
    case 'RUNNING':
      if (answerable.length > 0 && !run.cancel_requested_at) {
        const step = answerable[0];
        return status(TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage(run, `wait:${step.step_id}`, askFor(step)));
      }
      return status(TaskState.TASK_STATE_WORKING);
    default:
      return status(TaskState.TASK_STATE_SUBMITTED);
  }
}

/** A COMPLETED run's output as the task's one artifact: text when it is a string, else JSON data. */
export function outputArtifact(run: TaskRun): Artifact {
  const output = (run.result_blob as { output?: unknown } | null)?.output ?? null;
  return {
    artifactId: 'output',
    name: 'output',
    description: "The run's output",
    parts: [typeof output === 'string' ? textPart(output) : dataPart(output)],
    metadata: undefined,
    extensions: [],
  };
}

export function taskOf(view: RunTask): Task {
  const { run } = view;
  return {
    id: run.uid,
    contextId: run.uid,
    status: statusOf(view),
    artifacts: run.state === 'COMPLETED' ? [outputArtifact(run)] : [],
    history: [],
    metadata: { run_uid: run.uid, run_state: run.state },
  };
}

/** The caller's own run named by a task id, with its answerable waits; TaskNotFound for anything else. */
export async function readRunTask(services: ApiServices, viewer: User, taskId: string): Promise<RunTask> {
  const run = isUid(taskId)
    ? ((await CircuitRun.findByPk(taskId, { attributes: TASK_ATTRIBUTES })) as TaskRun | null)
    : null;
  if (!run || run.user_uid !== viewer.uid) throw taskNotFound(taskId);
  const [waiting] = run.state === 'RUNNING' ? await services.runs.waitingSteps([run.uid]) : [[]];
  return { run, answerable: waiting.filter((step) => step.kind !== 'time') };
}

export const isFinal = (state: TaskState) =>
  state === TaskState.TASK_STATE_COMPLETED ||
  state === TaskState.TASK_STATE_FAILED ||
  state === TaskState.TASK_STATE_CANCELED ||
  state === TaskState.TASK_STATE_REJECTED;

/** Terminal, or waiting for the client: where a blocking send answers and a stream stops. */
export const isSettled = (state: TaskState) => isFinal(state) || state === TaskState.TASK_STATE_INPUT_REQUIRED;
