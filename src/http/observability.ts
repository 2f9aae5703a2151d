import crypto from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Application, Express, NextFunction, Request, Response } from 'express';
import client from 'prom-client';
import type { Logger } from '../logger';

/**
 * prom-client's gauges named like counters (`_total` is a counter's suffix: `promtool check metrics` refuses
 * them). Each is the sum of its by-type gauge, which stays: `sum(nodejs_active_handles)`.
 */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** The label of a request that matched no route: one value, whatever the path. */
export const UNMATCHED_ROUTE = 'unmatched';

export function createMetrics() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);
  const requests = new client.Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route template and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const latency = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method and route template',
    labelNames: ['method', 'route'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return { registry, requests, latency };
}

export type Metrics = ReturnType<typeof createMetrics>;

const SECRET_PARAM = /(token|password|passwd|secret|key|auth|session|signature|sig)/i;

/**
 * The URL as logged: a client that puts a credential in the query string (`?access_token=…`) must not
 * get it written to the logs, and neither may an API token (`cst_…`) anywhere in the URL.
 */
export function redactUrl(url: string | undefined): string | undefined {
  if (!url) return url;
  const [pathPart, query] = url.split(/\?(.*)/s, 2);
  let redacted = pathPart;
  if (query !== undefined) {
    const params = query.split('&').map((pair) => {
      const [name] = pair.split('=', 1);
      return pair.includes('=') && SECRET_PARAM.test(decodeURIComponentSafe(name)) ? `${name}=[redacted]` : pair;
    });
    redacted += `?${params.join('&')}`;
  }
  return redacted.replace(/cst_[A-Za-z0-9_%-]+/g, 'cst_[redacted]');
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

declare module 'http' {
  interface IncomingMessage {
    /** The request id (X-Request-Id). */
    id?: string;
    /** A logger whose lines carry `req: {id, method, url}`. */
    log?: Logger;
  }
}

const NOT_LOGGED = new Set(['/healthz', '/metrics']);

/** `req.log` is made, when first used, from the logger of the request's app (app.locals). */
const APP_LOG = 'log';
const REQUEST_LOG = Symbol('requestLog');
type LoggedRequest = http.IncomingMessage & { app?: Application; [REQUEST_LOG]?: Logger };

function requestFields(req: http.IncomingMessage) {
  return { id: req.id, method: req.method, url: redactUrl((req as Request).originalUrl ?? req.url) };
}

/*
 * A getter on the prototype rather than a property set on each request (adding properties to a request
 * was a measurable part of a read's CPU), and the child logger is built only when something logs
 * through it (pino-http built one up front for every request, ~6% of the CPU of a cached search even
 * with logging off). Other IncomingMessages (responses to this process's own requests) have no app: undefined.
 */
Object.defineProperty(http.IncomingMessage.prototype, 'log', {
  configurable: true,
  get(this: LoggedRequest): Logger | undefined {
    const base = this.app?.locals[APP_LOG] as Logger | undefined;
    if (!base) return undefined;
    return (this[REQUEST_LOG] ??= base.child({ req: requestFields(this) }));
  },
});

/**
 * Each request gets an id (X-Request-Id, echoed when the client gave a sane one) and a `req.log` child
 * logger carrying `req: {id, method, url}`; when its response ends, one line ("request completed", or
 * "request errored" at error level from status 500) with `res` and `responseTime` — the lines
 * pino-http wrote — and the per-route metrics, from one pair of listeners (one middleware and one
 * listener per concern each cost an allocation and an emit per request).
 */
function observeRequests(log: Logger, metrics: Metrics) {
  const logCompleted = log.isLevelEnabled('info');
  return (req: Request, res: Response, next: NextFunction) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && /^[\w.-]{1,100}$/.test(given) ? given : crypto.randomUUID();
    res.setHeader('X-Request-Id', id);
    req.id = id;
    const logged = logCompleted && !NOT_LOGGED.has(req.url);
    const started = performance.now();
    const done = () => {
      res.off('finish', done);
      res.off('close', done);
      const seconds = (performance.now() - started) / 1000;
      // Label by the matched route template (`/api/v1/circuits/:circuit_uid`), never the raw URL, to keep cardinality bounded.
      const route =
        (res.locals.route as string | undefined) ??
        (typeof req.route?.path === 'string' ? `${req.baseUrl}${req.route.path}` : UNMATCHED_ROUTE);
      if (res.writableFinished) {
        metrics.requests.inc({ method: req.method, route, status: String(res.statusCode) });
        metrics.latency.observe({ method: req.method, route }, seconds);
      }
      if (!logged) return;
      // Not the response headers: a download's Location is a signed URL (a credential until it expires),
      // and serialising every header through the redaction was a measurable part of a read's CPU.
      // Without a child logger unless one was made already: building one per request cost more than the line.
      const child = (req as LoggedRequest)[REQUEST_LOG];
      const line = {
        ...(child ? {} : { req: requestFields(req) }),
        res: { statusCode: res.statusCode, contentLength: res.getHeader('content-length') },
        responseTime: Math.round(seconds * 1000),
      };
      if (res.statusCode >= 500)
        (child ?? log).error(
          { ...line, err: new Error(`failed with status code ${res.statusCode}`) },
          'request errored',
        );
      else (child ?? log).info(line, 'request completed');
    };
    res.on('finish', done);
    res.on('close', done);
    next();
  };
}

/** Request ids, structured request logs and per-route metrics, mounted before any route. */
export function mountObservability(app: Express, log: Logger, metrics: Metrics): void {
  app.locals[APP_LOG] = log;
  app.use(observeRequests(log, metrics));
}
