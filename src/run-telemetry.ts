import type { AttemptSpan, RunLifecycleSubscriptions, RunTracer } from './runs';
import type { RunMetricsStore } from './telemetry/run-metrics';
import {
  childContext,
  contextOf,
  endSpan,
  ROOT_CONTEXT,
  startSpan,
  traceparentOf,
  tracingEnabled,
  validTraceparent,
} from './telemetry/tracing';

/** Run metrics subscribe to the run wing's `ended`: each run's state, duration since creation and charge, counted once. */
export function subscribeRunMetrics(
  lifecycle: RunLifecycleSubscriptions,
  metrics: Pick<RunMetricsStore, 'runEnded'>,
): void {
  lifecycle.on('ended', (event) => metrics.runEnded(event.state, event.createdAt, event.charged));
}

/**
 * The run wing's traces (docs/telemetry.md): a query's span when a
 * run is accepted, whose context is stored on the run; one span per attempt, continuing it, whose
 * context the engine's step spans are children of. With traces off there are no spans: the caller's
 * valid `traceparent` is kept as sent (a worker with traces on continues it).
 */
export function runTracer(): RunTracer {
  return {
    queryTraceparent(given, circuitUid, versionUid) {
      const traceparent = validTraceparent(given);
      if (!tracingEnabled()) return traceparent;
      const span = startSpan('circuit.query', contextOf(traceparent), {
        'circuit.uid': circuitUid,
        'circuit.version.uid': versionUid,
      });
      const stored = traceparentOf(childContext(ROOT_CONTEXT, span));
      span.end();
      return stored ?? traceparent;
    },
    startAttempt(run): AttemptSpan | undefined {
      if (!tracingEnabled()) return undefined;
      const parent = contextOf(run.traceparent);
      const span = startSpan('circuit.run', parent, {
        'circuit.run.uid': run.uid,
        'circuit.uid': run.circuit_uid,
        'circuit.version.uid': run.circuit_version_uid,
        'circuit.run.attempt': run.attempt,
      });
      return {
        context: childContext(parent, span),
        end(ending) {
          if (ending)
            span.setAttributes({ 'circuit.run.state': ending.state, 'circuit.run.credits': Number(ending.cost) });
          else span.setAttribute('circuit.run.handed_back', true);
          endSpan(span, ending?.state === 'EXCEPTION' ? (ending.error?.code ?? 'Internal') : undefined);
        },
      };
    },
  };
}
