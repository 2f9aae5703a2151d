import {
  context as otelContext,
  propagation,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import type { Logger } from '../logger';

/**
 * Traces (docs/telemetry.md): on only when the standard OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. Off, the SDK is never loaded and every span below is
 * the API's no-op (and callers that check tracingEnabled() do nothing at all). On, spans go through a
 * BatchSpanProcessor to the OTLP/HTTP (JSON) exporter: a collector that is down only loses spans —
 * export errors are logged once, never thrown into a run. The SDK is per thread (the run worker
 * thread of `npm start` starts its own), started by the thread's composition (main.ts, worker.ts,
 * worker-thread.ts), which keeps the returned Tracing to shut it down.
 *
 * This module keeps no state: whether traces are on is what the OpenTelemetry API's own global
 * registration says (startTracing registers the SDK's provider there; shutdown unregisters it).
 */

/** The provider a ProxyTracerProvider delegates to while none is registered (the API's no-op). */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/** Whether this thread registered a tracer provider (startTracing) that has not been shut down. */
export function tracingEnabled(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NOOP_PROVIDER;
}

export const tracer = () => trace.getTracer('circuit-service');

export interface Tracing {
  shutdown(): Promise<void>;
}

/** Starts the SDK when the environment asks for traces; null (and nothing loaded) otherwise. */
export function startTracing(log: Logger, env: NodeJS.ProcessEnv = process.env): Tracing | null {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return null;
  if (tracingEnabled()) return null;
  const { NodeTracerProvider } =
    require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const { BatchSpanProcessor } =
    require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { defaultResource, resourceFromAttributes } =
    require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { setGlobalErrorHandler } = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  let warned = false;
  setGlobalErrorHandler((error) => {
    if (warned) return;
    warned = true;
    log.warn({ err: error }, 'could not export traces (logged once; runs go on, their spans are dropped)');
  });
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME ?? 'circuit-service' }),
    ),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  log.info(
    { endpoint: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT },
    'exporting traces (OTLP/HTTP)',
  );
  return {
    async shutdown() {
      trace.disable();
      propagation.disable();
      await Promise.race([
        provider.shutdown().catch(() => {}),
        new Promise((resolve) => setTimeout(resolve, 2_000).unref()),
      ]);
    },
  };
}

const TRACEPARENT = /^[\da-f]{2}-[\da-f]{32}-[\da-f]{16}-[\da-f]{2}$/;

/** A W3C traceparent header value worth keeping, else null. */
export function validTraceparent(value: unknown): string | null {
  const text = Array.isArray(value) ? value[0] : value;
  return typeof text === 'string' && TRACEPARENT.test(text.trim().toLowerCase()) ? text.trim().toLowerCase() : null;
}

/** The context a stored traceparent names (the root context without one, or with tracing off). */
export function contextOf(traceparent: string | null | undefined): Context {
  if (!traceparent || !tracingEnabled()) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}

/** The traceparent that makes a span a child of `ctx`'s span (null with tracing off or no span). */
export function traceparentOf(ctx: Context): string | null {
  if (!tracingEnabled()) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier.traceparent ?? null;
}

/** Adds `traceparent` (and `tracestate`) for `ctx` to outgoing headers; unchanged with tracing off. */
export function withTraceHeaders(headers: Record<string, string>, ctx: Context | undefined): Record<string, string> {
  if (!ctx || !tracingEnabled()) return headers;
  const carrier: Record<string, string> = { ...headers };
  propagation.inject(ctx, carrier);
  return carrier;
}

/** Starts a span under `parent`; with tracing off the API's no-op span. */
export function startSpan(name: string, parent: Context, attributes: Attributes = {}): Span {
  return tracer().startSpan(name, { attributes }, parent);
}

export function childContext(parent: Context, span: Span): Context {
  return trace.setSpan(parent, span);
}

export function endSpan(span: Span, error?: string): void {
  if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
  span.end();
}

export { otelContext, ROOT_CONTEXT };
export type { Context as TraceContext, Span };
