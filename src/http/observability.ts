import crypto from 'node:crypto';
import type { Express, NextFunction, Request, Response } from 'express';
import client from 'prom-client';
import type { Logger } from '../logger';

export function createMetrics() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const requests = new client.Counter({
    name: 'http_requests_total', help: 'HTTP requests by route and status', labelNames: ['method', 'route', 'status'], registers: [registry],
  });
  const latency = new client.Histogram({
    name: 'http_request_duration_seconds', help: 'HTTP request latency by route', labelNames: ['method', 'route'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registers: [registry],
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
  try { return decodeURIComponent(value); } catch { return value; }
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

/**
 * Each request gets an id (X-Request-Id, echoed when the client gave a sane one), a `req.log` child
 * logger carrying `req: {id, method, url}`, and one line when its response ends ("request completed",
 * or "request errored" at error level from status 500) with `res` and `responseTime` — the lines
 * pino-http wrote. Unlike pino-http, the child logger is built only when something logs through it:
 * pino-http serialised every request into a child logger up front, which cost ~6% of the CPU of a
 * cached search even with logging off.
 */
function requestLogging(log: Logger) {
  const completedAt = log.isLevelEnabled('info');
  return (req: Request, res: Response, next: NextFunction) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && /^[\w.-]{1,100}$/.test(given) ? given : crypto.randomUUID();
    res.setHeader('X-Request-Id', id);
    req.id = id;
    const url = req.originalUrl;
    let child: Logger | undefined;
    const requestLog = () => (child ??= log.child({ req: { id, method: req.method, url: redactUrl(url) } }));
    Object.defineProperty(req, 'log', { get: requestLog, configurable: true, enumerable: false });
    if (completedAt && !NOT_LOGGED.has(req.url)) {
      const started = Date.now();
      const done = () => {
        res.off('finish', done);
        res.off('close', done);
        // Not the response headers: a download's Location is a signed URL (a credential until it expires),
        // and serialising every header through the redaction was a measurable part of a read's CPU.
        const line = { res: { statusCode: res.statusCode, contentLength: res.getHeader('content-length') }, responseTime: Date.now() - started };
        if (res.statusCode >= 500) requestLog().error({ ...line, err: new Error(`failed with status code ${res.statusCode}`) }, 'request errored');
        else requestLog().info(line, 'request completed');
      };
      res.on('finish', done);
      res.on('close', done);
    }
    next();
  };
}

/** Request ids, structured request logs and per-route metrics, mounted before any route. */
export function mountObservability(app: Express, log: Logger, metrics: Metrics): void {
  app.use(requestLogging(log));
  app.use((req: Request, res: Response, next: NextFunction) => {
    const end = metrics.latency.startTimer();
    res.on('finish', () => {
      // Label by the matched route pattern, never the raw URL, to keep cardinality bounded.
      const route = (res.locals.route as string | undefined) ?? (req.route?.path ? `${req.baseUrl}${req.route.path}` : req.baseUrl || 'unmatched');
      metrics.requests.inc({ method: req.method, route, status: String(res.statusCode) });
      end({ method: req.method, route });
    });
    next();
  });
}
