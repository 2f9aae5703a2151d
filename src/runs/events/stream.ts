import type { RunDeps } from '../ports';
import { isUid } from '../../ids';
import { isTerminal, RUN_STATES, type RunState } from '../../domain/runs';
import type { RunEventKind } from '../../models/RunEvent';
import { currentStateSeq, readRunEvents, seqOfState, type LoggedRunEvent } from './log';

export interface RunEventStreamOptions {
  /** Events after this seq; null = from the run's current state event (the run as it is now). */
  after: number | null;
  kinds: readonly RunEventKind[];
  /** Re-read the log at least this often, covering a notification lost while the bus reconnected. */
  pollMs?: number;
  /** Ends the stream when it aborts (the reader's authority was lost, src/auth/stream-authority.ts). */
  signal?: AbortSignal;
  /** Called once when the stream ends, however. */
  onEnd?: () => void;
}

/**
 * THE source of a run's events (docs/runs.md, Event log), behind the REST SSE stream, `circuitRunEvents` and
 * `circuitRunUpdated`: replays the log after a position, then follows it live until the run's
 * terminal state has been delivered. It subscribes to the bus BEFORE each read, so nothing that
 * commits between a read and the wait is missed (the race a wait must not lose), and holds no database
 * connection while it waits. `return()` ends it at once, also while it waits.
 */
export function runEventStream(
  deps: RunDeps,
  uid: string,
  options: RunEventStreamOptions,
): AsyncIterableIterator<LoggedRunEvent> {
  const stopped = new AbortController();
  let dirty = true;
  let wake: (() => void) | undefined;
  const nudge = () => {
    dirty = true;
    wake?.();
  };
  const unsubscribe = deps.bus.subscribe(uid, (message) => {
    if (message.seq !== undefined || message.state !== undefined) nudge();
  });
  stopped.signal.addEventListener(
    'abort',
    () => {
      unsubscribe();
      wake?.();
      options.onEnd?.();
    },
    { once: true },
  );
  if (options.signal?.aborted) stopped.abort();
  else options.signal?.addEventListener('abort', () => stopped.abort(), { once: true });
  const pollMs = options.pollMs ?? Math.max(1_000, deps.config.sseKeepAliveMs);

  const events = (async function* () {
    try {
      let after = options.after ?? (await currentStateSeq(deps.sequelize, uid)) - 1;
      while (!stopped.signal.aborted) {
        dirty = false;
        const read = await readRunEvents(deps.sequelize, uid, after, options.kinds);
        for (const event of read.events) {
          if (stopped.signal.aborted) return;
          after = event.seq;
          yield event;
        }
        if (read.more) continue;
        if (read.state === null || isTerminal(read.state)) return;
        if (!dirty) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, pollMs);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
            if (dirty || stopped.signal.aborted) wake();
          });
          wake = undefined;
        }
      }
    } finally {
      stopped.abort();
    }
  })();

  return {
    next: () => events.next(),
    return: async (value?: unknown) => {
      stopped.abort();
      return events.return(value as never);
    },
    throw: (error?: unknown) => events.throw(error),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** `inner` with each value mapped; `return()` reaches `inner` at once (ending a waiting stream). */
export function mapStream<T, U>(
  inner: AsyncIterableIterator<T>,
  map: (value: T) => Promise<U>,
): AsyncIterableIterator<U> {
  return {
    async next() {
      const result = await inner.next();
      return result.done ? { done: true, value: undefined } : { done: false, value: await map(result.value) };
    },
    async return(value?: unknown) {
      await inner.return?.(value);
      return { done: true, value: undefined };
    },
    async throw(error?: unknown) {
      await inner.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** Where a stream that a client opens (or re-opens) starts, and whether it has nothing left to send. */
export interface StreamStart {
  /** Events after this seq are sent. */
  after: number | null;
  /** The client has seen everything of a terminal run (an SSE client is then told 204, and stops reconnecting). */
  complete: boolean;
}

/**
 * The position a client resumes from: `lastEventId` is a seq, or a state name (ids
 * before event logs) meaning "after that state"; without one, the stream starts just before the run's
 * current state event, fixed now: a client that acts once the stream is open (and so ends the run)
 * still gets that state first.
 */
export async function streamStart(
  deps: RunDeps,
  uid: string,
  kinds: readonly RunEventKind[],
  lastEventId: unknown,
): Promise<StreamStart> {
  const id = typeof lastEventId === 'string' ? lastEventId.trim() : '';
  let resumed: number | null = null;
  if (/^\d{1,9}$/.test(id)) resumed = Number(id);
  else if ((RUN_STATES as readonly string[]).includes(id) && isUid(uid))
    resumed = await seqOfState(deps.sequelize, uid, id as RunState);
  if (resumed === null)
    return { after: isUid(uid) ? (await currentStateSeq(deps.sequelize, uid)) - 1 : null, complete: false };
  const rest = await readRunEvents(deps.sequelize, uid, resumed, kinds, 1);
  return { after: resumed, complete: rest.state !== null && isTerminal(rest.state) && rest.events.length === 0 };
}
