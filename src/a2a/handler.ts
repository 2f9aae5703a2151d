import crypto from 'node:crypto';
import {
  PushNotificationNotSupportedError,
  TaskNotCancelableError,
  TaskState,
  UnsupportedOperationError,
  type A2ARequestHandler,
  type AgentCardType as AgentCard,
  type CancelTaskRequest,
  type GetExtendedAgentCardRequest,
  type GetTaskRequest,
  type ListTaskPushNotificationConfigsRequest,
  type ListTaskPushNotificationConfigsResponse,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type SdkUser,
  type SendMessageRequest,
  type ServerCallContext,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type Task,
  type TaskPushNotificationConfig,
} from './sdk';
import { AppError } from '../errors';
import { CircuitVersion, type User } from '../models';
import type { Authentication } from '../auth/authenticate';
import type { TokenScope } from '../domain/token-scopes';
import { scopeRefusal } from '../policies/token.policy';
import { circuitPermits } from '../policies/circuit.policy';
import { runPermits, type RunAction } from '../policies/run.policy';
import { limitRunCreation } from '../ratelimit';
import { checkApprovalDecision, type LoggedRunEvent } from '../runs';
import type { ApiServices } from '../graphql/context';
import { runnableCircuits } from '../mcp/tools';
import { agentCard, skillsOf } from './card';
import { malformed, taskNotFound, toA2aError } from './errors';
import { decisionOf, runInputOf, signalOf } from './input';
import { isFinal, isSettled, outputArtifact, readRunTask, statusOf, taskOf, type RunTask } from './tasks';

/** Who sends an A2A request, as the HTTP layer (./http.ts) authenticated it. */
export interface A2aCaller {
  viewer: User;
  auth: Extract<Authentication, { kind: 'token' }>;
  /** Headers for the answer (RateLimit-*), set before it starts. */
  setHeaders(headers: Record<string, string>): void;
  /** Aborted when the HTTP request closes: stop waiting (the run goes on). */
  closed: AbortSignal;
  /** Who an open stream counts against (src/streams/open-streams.ts). */
  streamClient: string;
}

/** The SDK's user of a call, carrying the caller. */
export class CallerUser implements SdkUser {
  constructor(readonly caller: A2aCaller) {}
  get isAuthenticated(): boolean {
    return true;
  }
  get userName(): string {
    return this.caller.viewer.uid;
  }
}

function callerOf(context: ServerCallContext): A2aCaller {
  if (context.user instanceof CallerUser) return context.user.caller;
  throw new AppError('Unauthorized', 'A valid bearer token is required');
}

function requireScope(caller: A2aCaller, scope: TokenScope): void {
  const refusal = scopeRefusal(caller.viewer, [scope]);
  if (refusal) throw new AppError('NotAllowed', refusal);
}

/** The Idempotency-Key of a new task: the caller and the message id (a client resending a message gets the same run). */
function messageKey(viewer: User, messageId: string): string | null {
  if (!messageId) return null;
  const digest = crypto.createHash('sha256').update(`${viewer.uid}\n${messageId}`).digest('base64url');
  return `a2a-${digest}`;
}

/** Events after which a task's status may have changed: the run's states, and its steps' starts, ends and waits. */
function mayChangeStatus(event: LoggedRunEvent): boolean {
  if (event.kind === 'state') return true;
  return event.kind === 'step' && ['waiting', 'completed', 'failed'].includes(String(event.data.status));
}

const notifications = () =>
  new PushNotificationNotSupportedError({ message: 'Push notifications are not offered: stream or poll the task' });

/**
 * The A2A request handler (docs/a2a.md) over the run wing: a task IS a run (its id the run's uid), so
 * every answer is a read of the run, any API process answers for any task, and nothing is kept in
 * memory between requests. The SDK's own DefaultRequestHandler keeps each task's events on an
 * in-process bus (a resubscribe elsewhere, or after a restart, finds nothing, and a task waiting for
 * input keeps its bus for good); this one follows the run's event stream instead.
 */
export class RunTaskHandler implements A2ARequestHandler {
  constructor(
    private readonly deps: {
      services: ApiServices;
      version: string;
      /** The service's public address, known once it listens. */
      baseUrl: () => string;
    },
  ) {}

  private get services(): ApiServices {
    return this.deps.services;
  }

  /** The card without skills: what the SDK checks a request's protocol version against. */
  async getAgentCard(): Promise<AgentCard> {
    return agentCard(this.deps.baseUrl(), this.deps.version, []);
  }

  /** The caller's card: the circuits they may run as skills. */
  async cardFor(viewer: User): Promise<AgentCard> {
    return agentCard(this.deps.baseUrl(), this.deps.version, await skillsOf(this.services, viewer));
  }

  getAuthenticatedExtendedAgentCard(
    _params: GetExtendedAgentCardRequest,
    context: ServerCallContext,
  ): Promise<AgentCard> {
    return this.guard(() => this.cardFor(callerOf(context).viewer));
  }

  sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Task> {
    return this.guard(async () => {
      const caller = callerOf(context);
      const uid = await this.accept(caller, params);
      if (params.configuration?.returnImmediately) return taskOf(await this.read(caller, uid, 'debug'));
      return taskOf(await this.untilSettled(caller, uid));
    });
  }

  async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const caller = await this.guard(async () => callerOf(context));
    const uid = await this.guard(() => this.accept(caller, params));
    yield* this.follow(caller, uid);
  }

  async *resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const caller = await this.guard(async () => {
      const caller = callerOf(context);
      requireScope(caller, 'runs:read');
      return caller;
    });
    const view = await this.guard(() => this.read(caller, params.id, 'debug'));
    if (isFinal(statusOf(view).state))
      throw new UnsupportedOperationError({ message: `Task ${view.run.uid} has ended: read it with GetTask` });
    yield* this.follow(caller, view.run.uid);
  }

  getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.guard(async () => {
      const caller = callerOf(context);
      requireScope(caller, 'runs:read');
      return taskOf(await this.read(caller, params.id, 'debug'));
    });
  }

  /** The run's cancel (docs/runs.md, Cancel): it waits a little for the run to end, then answers the task. */
  cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.guard(async () => {
      const caller = callerOf(context);
      requireScope(caller, 'runs:write');
      const view = await this.read(caller, params.id, 'cancel');
      if (isFinal(statusOf(view).state))
        throw new TaskNotCancelableError({ message: `Task ${view.run.uid} has ended: it cannot be canceled` });
      await this.services.runs.cancel(view.run.uid);
      return taskOf(await this.read(caller, view.run.uid, 'debug'));
    });
  }

  async listTasks(_params: ListTasksRequest, _context: ServerCallContext): Promise<ListTasksResponse> {
    throw new UnsupportedOperationError({
      message: 'ListTasks is not offered: GET /api/v1/users/circuit-runs lists your runs',
    });
  }

  async createTaskPushNotificationConfig(_params: TaskPushNotificationConfig): Promise<TaskPushNotificationConfig> {
    throw notifications();
  }

  async getTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    throw notifications();
  }

  async listTaskPushNotificationConfigs(
    _params: ListTaskPushNotificationConfigsRequest,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    throw notifications();
  }

  async deleteTaskPushNotificationConfig(): Promise<void> {
    throw notifications();
  }

  /** Errors as the SDK frames them: refusals with the service's code, anything unforeseen as a bare internal error. */
  private async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw toA2aError(error, this.services.log);
    }
  }

  /** The caller's run as a task, when the run policy lets them `action` it; TaskNotFound otherwise (no hint whether it exists). */
  private async read(caller: A2aCaller, taskId: string, action: RunAction): Promise<RunTask> {
    const view = await readRunTask(this.services, caller.viewer, taskId);
    if (!runPermits(caller.viewer, view.run, action)) throw taskNotFound(taskId);
    return view;
  }

  /** A message: a new task (a run), or the answer to a task waiting for input. Returns the run's uid. */
  private async accept(caller: A2aCaller, params: SendMessageRequest): Promise<string> {
    const message = params.message;
    if (!message) throw malformed('message is required');
    requireScope(caller, 'runs:write');
    if (message.taskId) return this.answer(caller, message);
    return this.start(caller, message, params.metadata);
  }

  /**
   * Starts a run of the skill the message names (`metadata.skill_id`, on the message or the
   * request), or of the caller's only runnable circuit: the same command as a REST query (policy,
   * input validation, credits, idempotency per message id, "my runs"), counted by the run rate limit.
   */
  private async start(caller: A2aCaller, message: Message, requestMetadata: Record<string, unknown> | undefined) {
    const { services } = this;
    const { viewer } = caller;
    const skillId: unknown = message.metadata?.skill_id ?? requestMetadata?.skill_id;
    const tools = await runnableCircuits(services, viewer);
    let tool = tools.length === 1 && skillId === undefined ? tools[0] : undefined;
    if (skillId !== undefined) {
      if (typeof skillId !== 'string') throw malformed('metadata.skill_id must be a string');
      tool = tools.find((t) => t.name === skillId);
      if (!tool)
        throw malformed(`Unknown skill "${skillId.slice(0, 200)}": the agent card lists the skills your token may use`);
    }
    if (!tool)
      throw malformed(
        tools.length === 0
          ? 'You have no circuit to run: the agent card lists no skills'
          : `Name the skill in the message's metadata.skill_id: you may run ${tools.length} circuits`,
      );
    // A protected circuit's input schema is its owner's: another user sends a data part.
    const version = circuitPermits(viewer, tool.circuit, 'read')
      ? await CircuitVersion.findByPk(tool.circuit.primary_version_uid!, { attributes: ['uid', 'definition'] })
      : null;
    const input = runInputOf(message, (version?.definition.query_schema as Record<string, unknown>) ?? {});
    const headers: Record<string, string> = {};
    try {
      await limitRunCreation(services.runRateLimiter, viewer, headers);
    } finally {
      caller.setHeaders(headers);
    }
    const { run } = await services.runs.create(viewer, {
      adaptorUid: tool.adaptorUid,
      input,
      idempotencyKey: messageKey(viewer, message.messageId),
    });
    services.log.debug({ run: run.uid, skill: tool.name }, 'a2a message started a run');
    return run.uid;
  }

  /**
   * A message on a task waiting for input: the signal to its signal wait, or the decision on its
   * approval (the oldest waiting step, or the one the message's `metadata.step_id` names), delivered
   * as the owner's signal or decision is over REST.
   */
  private async answer(caller: A2aCaller, message: Message): Promise<string> {
    const view = await this.read(caller, message.taskId, 'approve');
    if (isFinal(statusOf(view).state))
      throw new UnsupportedOperationError({ message: `Task ${view.run.uid} has ended: it takes no more messages` });
    const stepId: unknown = message.metadata?.step_id;
    const step = typeof stepId === 'string' ? view.answerable.find((s) => s.step_id === stepId) : view.answerable[0];
    if (!step)
      throw malformed(
        typeof stepId === 'string'
          ? `The task does not wait on step "${stepId.slice(0, 200)}"`
          : 'The task is not waiting for input',
      );
    if (step.kind === 'approval') {
      const decision = decisionOf(message);
      checkApprovalDecision(decision);
      await this.services.runs.approve(view.run.uid, step.step_id, decision);
    } else {
      await this.services.runs.signal(view.run.uid, step.step_id, signalOf(message), view.run.circuit_version_uid);
    }
    return view.run.uid;
  }

  /** Until the task is terminal or waits for input, following the run's events (no polling); the request's close stops waiting. */
  private async untilSettled(caller: A2aCaller, uid: string): Promise<RunTask> {
    let view = await this.read(caller, uid, 'debug');
    if (isSettled(statusOf(view).state)) return view;
    const stream = this.services.runs.stream(uid, { after: null, kinds: ['state', 'step'], signal: caller.closed });
    try {
      for await (const event of stream) {
        if (!mayChangeStatus(event)) continue;
        view = await this.read(caller, uid, 'debug');
        if (isSettled(statusOf(view).state)) return view;
      }
    } finally {
      await stream.return?.(undefined);
    }
    return this.read(caller, uid, 'debug');
  }

  /**
   * A task's stream: the task as it is, then a status update each time its state changes (the run's
   * output as an artifact just before `completed`), until it ends or waits for input. It stops when
   * the caller's token is revoked or expires, as the run's REST event stream does.
   */
  private async *follow(caller: A2aCaller, uid: string): AsyncGenerator<StreamResponse, void, undefined> {
    const { services } = this;
    let view = await this.guard(() => this.read(caller, uid, 'debug'));
    let state = statusOf(view).state;
    if (isSettled(state)) {
      yield { payload: { $case: 'task', value: taskOf(view) } };
      return;
    }

    // Lost authority ends the stream with an error; a shutdown (or the client leaving) just ends it.
    const lost = new AbortController();
    const ended = new AbortController();
    const release = await this.guard(async () => services.streams?.open.open(caller.streamClient, () => ended.abort()));
    const unwatch = services.streams?.authority.watch(
      { auth: caller.auth, runUid: uid, runOwnerUid: view.run.user_uid },
      () => lost.abort(new AppError('Unauthorized', 'The bearer token was revoked: the stream has ended')),
    );
    const expiresAt = caller.viewer.tokenGrant?.expiresAt;
    const expiry = expiresAt
      ? setTimeout(
          () => lost.abort(new AppError('Unauthorized', 'The bearer token expired: the stream has ended')),
          Math.min(2 ** 31 - 1, Math.max(0, expiresAt.getTime() - Date.now())),
        )
      : undefined;
    const stream = services.runs.stream(uid, {
      after: null,
      kinds: ['state', 'step'],
      signal: AbortSignal.any([lost.signal, ended.signal, caller.closed]),
    });
    try {
      yield { payload: { $case: 'task', value: taskOf(view) } };
      for await (const event of stream) {
        if (!mayChangeStatus(event)) continue;
        view = await this.guard(() => this.read(caller, uid, 'debug'));
        const status = statusOf(view);
        if (status.state === state) continue;
        state = status.state;
        const ids = { taskId: uid, contextId: uid, metadata: undefined };
        if (state === TaskState.TASK_STATE_COMPLETED) {
          yield {
            payload: {
              $case: 'artifactUpdate',
              value: { ...ids, artifact: outputArtifact(view.run), append: false, lastChunk: true },
            },
          };
        }
        yield { payload: { $case: 'statusUpdate', value: { ...ids, status } } };
        if (isSettled(state)) return;
      }
      if (lost.signal.aborted) throw toA2aError(lost.signal.reason, services.log);
    } finally {
      clearTimeout(expiry);
      unwatch?.();
      release?.();
      await stream.return?.(undefined);
    }
  }
}
