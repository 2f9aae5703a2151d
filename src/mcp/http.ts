import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Express, Request, Response } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { authenticate } from '../auth/authenticate';
import { unauthorized } from '../errors';
import { BODY_LIMIT_BYTES } from '../http/json-body';
import { errorEnvelope } from '../error-status';
import { PROJECT_ROOT } from '../paths';
import type { ApiServices } from '../graphql/context';
import { InflightCalls } from './inflight-calls';
import { createMcpServer } from './server';

export const MCP_PATH = '/mcp';

const JSON_TYPES = ['application/json', 'application/*+json'];

function jsonRpcError(
  res: Response,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  res
    .status(status)
    .set({ 'Cache-Control': 'no-store', ...headers })
    .json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** Whether the POSTed body (one message or a batch) holds an `initialize` request. */
function initializes(body: unknown): boolean {
  return (Array.isArray(body) ? body : [body]).some((message) => isInitializeRequest(message));
}

/**
 * `/mcp` (docs/mcp.md): the Model Context Protocol over streamable HTTP, for the holder of a
 * bearer token. Stateless: each POST gets its own MCP server and transport, so any API process
 * answers any request; a tool call's progress and result stream back on its own POST's SSE answer.
 * No standalone GET stream and no DELETE (405). At `initialize` the client is given an
 * `Mcp-Session-Id`, kept by no process: it only scopes the idempotency keys of its calls (clients
 * number their requests from 0 in each session). Bodies go through the service's JSON parser first
 * (1 MiB → 413, the input-hygiene checks → 400, both in the REST envelope).
 */
export function mountMcp(app: Express, services: ApiServices): void {
  const inflight = new InflightCalls();
  const { version } = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    version: string;
  };

  app.all(MCP_PATH, async (req: Request, res: Response) => {
    res.locals.route = MCP_PATH;
    const auth = await authenticate(services.tokenCache, req.headers.authorization);
    if (auth.kind !== 'token') {
      const { status, body } = errorEnvelope(auth.kind === 'invalid' ? unauthorized(auth.message) : unauthorized());
      res
        .status(status)
        .set({
          'WWW-Authenticate': auth.kind === 'invalid' ? 'Bearer error="invalid_token"' : 'Bearer',
          'Cache-Control': 'no-store',
        })
        .json(body);
      return;
    }
    if (req.method !== 'POST') {
      return jsonRpcError(res, 405, -32000, 'Method not allowed: this server is stateless; POST JSON-RPC messages', {
        Allow: 'POST',
      });
    }
    // The service's parser has read a JSON body already; an empty one leaves nothing for the transport to read.
    if (req.body === undefined && req.is(JSON_TYPES))
      return jsonRpcError(res, 400, -32700, 'Parse error: the body is empty');

    let sessionId = typeof req.headers['mcp-session-id'] === 'string' ? req.headers['mcp-session-id'] : undefined;
    if (initializes(req.body)) {
      sessionId = crypto.randomUUID();
      // Merged into the transport's own response headers (Node keeps headers set before writeHead).
      res.setHeader('Mcp-Session-Id', sessionId);
    }

    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      maxRequestBodySize: BODY_LIMIT_BYTES,
    });
    const server = createMcpServer({
      services,
      version,
      viewer: auth.user,
      sessionId,
      inflight,
      close: () => {
        void transport.close();
      },
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    transport.onerror = (error) => services.log.debug({ err: error }, 'mcp transport error');
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
}
