import crypto from 'node:crypto';
import type { Request, Response } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { BODY_LIMIT_BYTES } from '../http/json-body';
import type { User } from '../models';
import type { ApiServices } from '../graphql/context';
import type { InflightCalls } from './inflight-calls';
import { createLegacyMcpServer } from './legacy-server';

export interface LegacyMcpContext {
  services: ApiServices;
  version: string;
  viewer: User;
  inflight: InflightCalls;
}

/** Whether the POSTed body (one message or a batch) holds an `initialize` request. */
function initializes(body: unknown): boolean {
  return (Array.isArray(body) ? body : [body]).some((message) => isInitializeRequest(message));
}

/**
 * One POST of a 2025-era client (protocol 2024-11-05 … 2025-11-25: `initialize`, no per-request
 * `_meta` envelope), served by `@modelcontextprotocol/sdk` 1.x, whose 2025-11-25 tasks the current SDK
 * no longer serves. Stateless: its own server and transport per POST. At `initialize` the client is
 * given an `Mcp-Session-Id`, kept by no process: it only scopes the idempotency keys of its calls
 * (clients number their requests from 0 in each session).
 */
export async function serveLegacyMcp(req: Request, res: Response, ctx: LegacyMcpContext): Promise<void> {
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
  const server = createLegacyMcpServer({
    ...ctx,
    sessionId,
    close: () => {
      void transport.close();
    },
  });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  transport.onerror = (error) => ctx.services.log.debug({ err: error }, 'mcp transport error');
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
}
