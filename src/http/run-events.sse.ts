import type { Express, Request, Response } from 'express';
import type { DocumentNode, GraphQLSchema } from 'graphql';
import { buildContext } from '../graphql/context';
import { createLoaders } from '../graphql/loaders';
import { runRoute, type BridgeResponse } from '../../rest-bridge/bridge';
import { API_PREFIX } from '../../rest-bridge/express';
import { runRoutes } from '../../rest-bridge/routes/runs';
import { isTerminal, RUN_STATES, stateRank, type RunState } from '../models/CircuitRun';
import type { Services } from '../services';

export const RUN_EVENTS_PATH = `${API_PREFIX}/circuit-runs/:uid/events`;

function lastSeenRank(header: unknown): number {
  const id = typeof header === 'string' ? header.trim() : '';
  return (RUN_STATES as readonly string[]).includes(id) ? stateRank(id as RunState) : -1;
}

/**
 * GET /api/v1/circuit-runs/{uid}/events (DESIGN §2): text/event-stream. The first event is the run
 * now, then one `event: state` per change; `data:` is exactly the GET /circuit-runs/{uid} payload
 * (each event re-runs that route's operation under the caller's token), `id:` is the state; a run
 * that went through RUNNING between two reads still gets its RUNNING event. A
 * `Last-Event-ID` skips states already seen; a client that saw the terminal state gets 204.
 * Comments keep the connection alive (every SSE_KEEP_ALIVE_MS, 15 s by default); the stream closes after a terminal state. Errors
 * before the stream starts are the route's JSON envelope (401/403/404).
 */
export function mountRunEvents(app: Express, schema: GraphQLSchema, operations: DocumentNode, services: Services): void {
  const route = runRoutes.find((r) => r.operation === 'GetCircuitRun');
  if (!route) throw new Error('the GetCircuitRun route is missing');

  app.get(RUN_EVENTS_PATH, async (req: Request, res: Response) => {
    const uid = String(req.params.uid);
    const onInternal = (error: unknown) => services.log.error({ err: error, route: RUN_EVENTS_PATH }, 'internal error in run events');
    let closed = false;
    let dirty = false;
    let wake: (() => void) | undefined;
    const nudge = () => { dirty = true; wake?.(); };
    // Subscribe before the first read so that no change between the two is missed.
    const unsubscribe = services.runEvents.subscribe(uid, nudge);
    const timers: NodeJS.Timeout[] = [];
    const finish = () => {
      if (closed) return;
      closed = true;
      unsubscribe();
      for (const timer of timers) clearInterval(timer);
      wake?.();
      if (!res.writableEnded) res.end();
    };
    req.on('close', finish);

    try {
      const context = await buildContext(services, req);
      const read = (): Promise<BridgeResponse> =>
        runRoute(schema, operations, route, { params: { uid }, query: {}, body: undefined, headers: req.headers },
          { ...context, loaders: createLoaders(), notices: [], responseHeaders: {} }, onInternal);

      let response = await read();
      if (response.status !== 200) {
        unsubscribe();
        closed = true;
        res.status(response.status).set(response.headers).json(response.body);
        return;
      }
      let lastRank = lastSeenRank(req.headers['last-event-id']);
      const firstState = (response.body as { payload: { state: RunState } }).payload.state;
      if (isTerminal(firstState) && stateRank(firstState) <= lastRank) {
        // Everything was seen: 204 tells an EventSource to stop reconnecting.
        unsubscribe();
        closed = true;
        res.status(204).end();
        return;
      }

      res.status(200).set({
        ...response.headers,
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache, no-transform',
        Connection: 'keep-alive',
        'X-Accel-Buffering': 'no',
      });
      res.flushHeaders();
      res.write('retry: 1000\n\n');
      // Keep-alive comments; a periodic re-read also covers a notification lost while reconnecting.
      timers.push(setInterval(() => { if (!closed) { res.write(': keep-alive\n\n'); nudge(); } }, services.config.sseKeepAliveMs));

      while (!closed) {
        if (response.status !== 200) break;
        const payload = (response.body as { payload: Record<string, unknown> & { state: RunState } }).payload;
        const rank = stateRank(payload.state);
        if (rank > lastRank) {
          if (lastRank === stateRank('PROVISIONED') && rank > stateRank('RUNNING')) {
            // The run passed through RUNNING between two reads; every state gets its event, so send
            // RUNNING as GET showed it then (the same run without the fields that come at its end).
            const { ended_at: _e, result_blob: _r, metrics: _m, ...running } = payload;
            res.write(`id: RUNNING\nevent: state\ndata: ${JSON.stringify({ ...running, state: 'RUNNING' })}\n\n`);
          }
          lastRank = rank;
          res.write(`id: ${payload.state}\nevent: state\ndata: ${JSON.stringify(payload)}\n\n`);
        }
        if (isTerminal(payload.state)) break;
        if (!dirty) await new Promise<void>((resolve) => { wake = resolve; });
        wake = undefined;
        if (closed) break;
        dirty = false;
        response = await read();
      }
      finish();
    } catch (error) {
      onInternal(error);
      if (!res.headersSent) {
        unsubscribe();
        closed = true;
        res.status(500).json({ error: { message: 'Internal server error', code: 'Internal' } });
      } else {
        finish();
      }
    }
  });
}
