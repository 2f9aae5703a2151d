import { CircuitVersion } from '../models';
import type { StepEvent } from '../engine/run-control';
import type { CircuitDefinition } from '../domain/definition';
import type { ApiServices } from '../graphql/context';

/** What a step event says, in words: the progress message. */
export function stepEventText(event: StepEvent): string {
  const step = `step ${event.step_id} (${event.kind})`;
  switch (event.status) {
    case 'started':
      return `${step} started`;
    case 'completed':
      return `${step} completed${event.cached ? ' (cached)' : ''}`;
    case 'failed':
      return `${step} failed${event.error ? `: ${event.error}` : ''}`;
    case 'retrying':
      return `${step} failed attempt ${event.attempt ?? '?'}${event.error ? ` (${event.error})` : ''}; retrying at ${event.retry_at ?? '?'}`;
    case 'agent_turn':
      return `${step} finished model turn ${event.turn ?? '?'}`;
    case 'tool_call':
      return `${step} turn ${event.turn ?? '?'} calls the tool ${event.tool ?? '?'}`;
    case 'tool_result':
      return `${step} turn ${event.turn ?? '?'}: the tool ${event.tool ?? '?'} ${event.error ? `failed: ${event.error}` : 'answered'}`;
    case 'waiting':
      if (event.for === 'signal') return `${step} waiting for a signal until ${event.expires_at ?? '?'}`;
      if (event.for === 'time') return `${step} waiting until ${event.expires_at ?? '?'}`;
      return `${step} waiting for approval${event.prompt ? `: ${event.prompt}` : ''}`;
    default:
      return `${step} ${String(event.status)}`;
  }
}

/**
 * Progress values for a run's step events. MCP requires progress to increase with every
 * notification, and a step's `started` event completes nothing: the whole part is the number of
 * completed steps, and events between two completions add a growing fraction below the next whole.
 */
export class StepProgress {
  private completed = 0;
  private since = 0;

  next(event: Pick<StepEvent, 'status'>): number {
    if (event.status === 'completed') {
      this.completed += 1;
      this.since = 0;
      return this.completed;
    }
    this.since += 1;
    return this.completed + this.since / (this.since + 1);
  }
}

/** What following a run asks of an MCP call, whichever protocol revision it came in. */
export interface RunFollower {
  /** The client's progress token (`_meta.progressToken`), when it asked for progress. */
  progressToken?: string | number;
  /** Aborted when the request's stream closed: stop following (what the caller then does with the run is its own). */
  signal: AbortSignal;
  sendProgress(params: {
    progressToken: string | number;
    progress: number;
    total?: number;
    message?: string;
  }): Promise<void>;
}

/**
 * Follows run `runUid`'s step events to its end, or to the follower's abort, sending a progress
 * notification per step when the client asked for them. `onStep` may end the following early with a
 * value (`early`). Answers the run's definition, for the result that follows.
 */
export async function followRun<T>(
  services: ApiServices,
  runUid: string,
  versionUid: string,
  follower: RunFollower,
  onStep?: (step: StepEvent) => Promise<T | undefined>,
): Promise<{ definition?: CircuitDefinition; early?: T }> {
  const version = await CircuitVersion.findByPk(versionUid, { attributes: ['uid', 'definition'] });
  const definition = version?.definition;
  const total = definition?.steps.length;
  const stream = services.runs.stream(runUid, { after: 0, kinds: ['state', 'step'] });
  const stop = () => {
    void stream.return?.(undefined);
  };
  follower.signal.addEventListener('abort', stop, { once: true });
  if (follower.signal.aborted) stop();
  const progress = new StepProgress();
  try {
    for await (const event of stream) {
      if (event.kind !== 'step') continue;
      const step = event.data as unknown as StepEvent;
      if (follower.progressToken !== undefined) {
        await follower
          .sendProgress({
            progressToken: follower.progressToken,
            progress: progress.next(step),
            total,
            message: stepEventText(step),
          })
          .catch(() => {});
      }
      const early = await onStep?.(step);
      if (early !== undefined) return { definition, early };
    }
  } finally {
    follower.signal.removeEventListener('abort', stop);
  }
  return { definition };
}
