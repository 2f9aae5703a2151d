import zlib from 'node:zlib';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError, badInput } from '../errors';
import { findInputFlaw } from '../input-hygiene';
import { ERROR_STATUS } from '../error-status';

/** The largest request body any endpoint reads (docs/limits.md); blob uploads in /settings have their own. */
export const BODY_LIMIT_BYTES = 1024 * 1024;
const LIMIT_TEXT = '1 MiB';

/** Paths whose own parser enforces a larger, documented limit while streaming (BLOB_MAX_BYTES). */
const OWN_LIMIT = new Set(['POST /settings/blobs']);

const tooLarge = () => new AppError('PayloadTooLarge', `The request body is larger than ${LIMIT_TEXT}`);

/**
 * A body announced (Content-Length) larger than BODY_LIMIT_BYTES, refused before reading any of it.
 * Chunked bodies are cut off by each parser's own limit (the same constant) while streaming.
 */
export function announcedTooLarge(req: Request): boolean {
  const length = Number(req.headers['content-length'] ?? 0);
  return length > BODY_LIMIT_BYTES && !OWN_LIMIT.has(`${req.method} ${req.path}`);
}

/** A body-parser error (a route's own parser, e.g. /settings forms) as the service's own error. */
function fromBodyParser(error: Error & { type?: string; status?: number }): AppError | undefined {
  if (error.type === 'entity.too.large') return tooLarge();
  if (error.type === 'entity.parse.failed') return badInput('Malformed body');
  return error.status && error.status >= 400 && error.status < 500
    ? badInput('The request body could not be read')
    : undefined;
}

type Decode = (
  buffer: Buffer,
  options: zlib.ZlibOptions & zlib.BrotliOptions,
  done: (error: Error | null, result: Buffer) => void,
) => void;

const DECODERS: Record<string, Decode> = {
  gzip: zlib.gunzip,
  'x-gzip': zlib.gunzip,
  deflate: zlib.inflate,
  br: zlib.brotliDecompress,
};

/** Inflates a whole compressed body off the event loop, refusing it the moment its output would pass `limit`. */
function decode(decoder: Decode, raw: Buffer, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    decoder(raw, { maxOutputLength: limit }, (error, result) => {
      if (!error) return resolve(result);
      reject(
        (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE'
          ? tooLarge()
          : badInput('The request body could not be read'),
      );
    });
  });
}

/**
 * Reads the body, at most `limit` bytes, and stops reading the moment it is over: body-parser instead
 * reads a refused body to its end before answering, which lets one client keep the connection busy with
 * hundreds of megabytes. A compressed body is kept compressed until it has arrived whole, then inflated
 * at once (at most `limit` bytes out): a body that never ends holds only the bytes its client sent, not
 * what they would inflate to (a kilobyte of gzip inflating to a megabyte, held per stalled connection).
 */
function readBody(req: Request, limit: number, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
    let decoder: Decode | undefined;
    if (encoding !== 'identity') {
      decoder = DECODERS[encoding];
      if (!decoder)
        return reject(
          new AppError(
            'UnsupportedMediaType',
            `Unsupported Content-Encoding "${encoding}": send identity, gzip, deflate or br`,
          ),
        );
    }
    // A body that is started and never finished would hold its buffer (and the connection) for good.
    const timer = setTimeout(
      () =>
        finish(
          new AppError('RequestTimeout', `The request body was not received in full within ${timeoutMs / 1000} s`),
        ),
      timeoutMs,
    );
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (error?: AppError) => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onAborted);
      if (!error) {
        const raw = Buffer.concat(chunks);
        chunks.length = 0;
        return resolve(decoder ? decode(decoder, raw, limit) : raw);
      }
      // What was received is dropped at once, not when the connection goes.
      chunks.length = 0;
      req.pause();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) finish(tooLarge());
      else chunks.push(chunk);
    };
    const onEnd = () => finish();
    const onError = () => finish(badInput('The request body could not be read'));
    const onAborted = () => finish(badInput('The request body was cut short'));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted);
  });
}

/** JSON (RFC 8259), also with a `+json` structured syntax suffix — the REST bridge's JSON_TYPES. */
const JSON_TYPES = ['application/json', 'application/*+json'];

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Parses a JSON body into `req.body`. */
async function parseJsonBody(req: Request, timeoutMs: number): Promise<void> {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(String(req.headers['content-type']))?.[1]?.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8')
    throw new AppError('UnsupportedMediaType', `Unsupported charset "${charset}": send JSON as UTF-8`);
  const bytes = await readBody(req, BODY_LIMIT_BYTES, timeoutMs);
  if (bytes.length === 0) return;
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw badInput('The request body is not valid UTF-8');
  }
  try {
    req.body = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    throw badInput('Malformed JSON body');
  }
}

const JSON_PARAMS = ['variables', 'extensions'];

/** /graphql and /graphql/stream, wherever the middleware asking is mounted. */
function isGraphqlPath(req: Request): boolean {
  const path = req.originalUrl.split('?', 1)[0];
  return path === '/graphql' || path.startsWith('/graphql/');
}

/**
 * The edge's half of the input-hygiene pass: every JSON body (REST, /graphql, /graphql/stream) and
 * every query parameter — including the JSON `variables` of a GraphQL GET — is refused with
 * BadClientData naming the field when it holds NUL, a lone surrogate or nests deeper than 64.
 */
function checkHygiene(req: Request): void {
  if (req.body !== undefined) {
    const flaw = findInputFlaw(req.body);
    if (flaw)
      throw badInput(flaw.path === 'value' ? `The request body ${flaw.problem}` : `${flaw.path} ${flaw.problem}`, {
        field: flaw.path,
      });
  }
  const query = req.query as Record<string, unknown>;
  for (const [name, value] of Object.entries(query)) {
    const flaw = findInputFlaw(value, name) ?? findInputFlaw(name);
    if (flaw)
      throw badInput(`query parameter ${flaw.path === 'value' ? name : flaw.path} ${flaw.problem}`, { field: name });
    if (isGraphqlPath(req) && JSON_PARAMS.includes(name) && typeof value === 'string') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        continue; /* the GraphQL server answers unparsable JSON */
      }
      const inner = findInputFlaw(parsed, name);
      if (inner) throw badInput(`${inner.path} ${inner.problem}`, { field: inner.path });
    }
  }
}

/** Whether the request has a body to come (announced by Content-Length or sent chunked). */
function hasBody(req: Request): boolean {
  return Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
}

/**
 * The body timeout for bodies this module does not read itself (the /settings forms, blob uploads,
 * anything a route leaves unread): a body that stalls is answered 408 `RequestTimeout` and the
 * connection closed, so what its route's parser held (a form's buffer, an upload's stream into
 * storage and its temporary file) is dropped at once, as for JSON. A form must arrive in full within
 * `timeoutMs`. A streamed upload (OWN_LIMIT: up to BLOB_MAX_BYTES, which a slow link takes longer
 * than that to send) must instead never go `timeoutMs` without a byte arriving; time our side holds
 * back reading (storage back-pressure) does not count. Node's own `requestTimeout` (300 s) bounds it
 * in all. A route that already answered gets no 408: its connection is closed.
 */
function watchBody(req: Request, res: Response, timeoutMs: number): void {
  const socket = req.socket;
  const streamed = OWN_LIMIT.has(`${req.method} ${req.path}`);
  let lastBytes = socket.bytesRead;
  let timer: NodeJS.Timeout | undefined;
  const stop = () => {
    clearTimeout(timer);
    req.off('end', stop).off('close', stop);
  };
  const check = () => {
    if (req.complete || socket.destroyed) return stop();
    if (streamed) {
      const bytes = socket.bytesRead;
      // Holding back is ours when the route paused the body or has not taken what it buffered.
      const heldBack = req.readableFlowing === false || req.readableLength >= req.readableHighWaterMark;
      if (bytes !== lastBytes || heldBack) {
        lastBytes = bytes;
        timer = setTimeout(check, timeoutMs);
        return;
      }
    }
    stop();
    if (res.headersSent) return void socket.destroy();
    sendEdgeError(
      req,
      res,
      new AppError(
        'RequestTimeout',
        streamed
          ? `Nothing more of the request body was received for ${timeoutMs / 1000} s`
          : `The request body was not received in full within ${timeoutMs / 1000} s`,
      ),
    );
  };
  timer = setTimeout(check, timeoutMs);
  req.once('end', stop).once('close', stop);
}

/**
 * Refuses bodies announced too large, parses JSON bodies (at most BODY_LIMIT_BYTES, never buffering
 * more) and runs the hygiene check; any other body gets the same timeout (watchBody). Mounted once in
 * front of every route, so REST, GraphQL and graphql-sse share one parser.
 */
export function jsonBody({ timeoutMs }: { timeoutMs: number }): RequestHandler {
  return (req, res, next) => {
    if (announcedTooLarge(req)) return next(tooLarge());
    // As body-parser does: `body` is present (undefined) on every request; Apollo's adapter insists on it.
    if (!Object.prototype.hasOwnProperty.call(req, 'body')) req.body = undefined;
    if (req.is(JSON_TYPES)) {
      parseJsonBody(req, timeoutMs)
        .then(() => checkHygiene(req))
        .then(() => next(), next);
      return;
    }
    if (hasBody(req) && !req.complete) watchBody(req, res, timeoutMs);
    try {
      checkHygiene(req);
    } catch (error) {
      return next(error);
    }
    next();
  };
}

/** What is read and dropped of a body after an answer that did not read it, so the client can read the answer first. */
const DRAIN_BYTES = 4 * BODY_LIMIT_BYTES;
const DRAIN_MS = 2000;

/**
 * A lingering close. After a `Connection: close` answer Node destroys the socket as soon as the answer is
 * handed to the kernel; with the client's body still arriving unread, the kernel then resets the connection,
 * and a reset drops whatever of the answer is not yet sent (a client sending a large body may see no answer
 * at all). So the close after the answer is a half-close (our FIN after the answer), what still comes is read
 * and dropped, and the socket is closed once the client closes its side, or after DRAIN_BYTES or DRAIN_MS.
 */
function linger(req: Request): void {
  const socket = req.socket;
  if (socket.destroyed) return;
  // Called by Node's server once the answer is finished (the answer said `Connection: close`).
  socket.destroySoon = () => {
    if (!socket.writableEnded) socket.end();
  };
  socket.once('end', () => socket.destroy());
  const timer = setTimeout(() => socket.destroy(), DRAIN_MS).unref();
  socket.once('close', () => clearTimeout(timer));
  let drained = 0;
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_BYTES) socket.destroy();
  });
  req.resume();
}

/** For an answer given without reading the body (too large, or refused before it, e.g. a 401): close the connection after it. */
export function closeAfterAnswer(req: Request, res: Response): void {
  res.set('Connection', 'close');
  linger(req);
}

/** Sends `error` in the envelope of the surface the request was for. */
export function sendEdgeError(req: Request, res: Response, error: AppError): void {
  const status = ERROR_STATUS[error.code];
  if (error.code === 'PayloadTooLarge') closeAfterAnswer(req, res);
  if (error.code === 'RequestTimeout') {
    // The rest of the body is never read: answer, then close the connection.
    res.set('Connection', 'close');
    res.once('finish', () => req.socket.destroySoon());
    // Node aborts no request whose response has finished, so a route's parser still reading this body
    // (multer, body-parser) would wait for it for good, holding what it had (an upload's temporary file).
    req.socket.once('close', () => {
      if (!req.complete && !req.destroyed) req.destroy();
    });
  }
  res.status(status).set('Cache-Control', 'no-store');
  if (isGraphqlPath(req)) {
    res.json({ errors: [{ message: error.message, extensions: { code: error.code } }] });
  } else {
    res.json({ error: { message: error.message, code: error.code } });
  }
}

/**
 * The last error handler: answers the edge's own errors (body, hygiene) and anything else a route
 * let through as JSON — never Express's HTML page with a stack trace — and logs the latter as
 * structured fields.
 */
export function jsonErrors(): ErrorRequestHandler {
  return (error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const known = error instanceof AppError ? error : fromBodyParser(error as Error);
    if (!known) req.log?.error({ err: error }, 'unhandled error');
    if (res.headersSent) return void res.end();
    sendEdgeError(req, res, known ?? new AppError('Internal', 'Internal server error'));
  };
}
