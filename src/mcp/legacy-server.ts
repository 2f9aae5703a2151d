import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CancelledNotificationSchema,
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { User } from '../models';
import type { ApiServices } from '../graphql/context';
import { callCircuitTool, callKey } from './call-tool';
import type { InflightCalls } from './inflight-calls';
import { findCircuitTool, listTools } from './tools';
import { cancelTask, createToolTask, getTask, taskResult } from './tasks';

export interface LegacyMcpServerOptions {
  services: ApiServices;
  /** The service's version (package.json), read once by mountMcp: the server's `serverInfo.version`. */
  version: string;
  viewer: User;
  /** The Mcp-Session-Id the client sent (minted by mountMcp at initialize), if any. */
  sessionId: string | undefined;
  inflight: InflightCalls;
  /** Ends this request's HTTP response (its transport). */
  close(): void;
}

const INSTRUCTIONS =
  'Each tool runs a circuit of Circuit Service as an ordinary, charged run and answers its output. ' +
  'Tools are the circuits you own or have starred and may run; send a progress token to follow the steps.';

/**
 * The MCP server for ONE HTTP request of one authenticated caller (stateless streamable HTTP: a new
 * server and transport per POST). Tools: `tools/list` and `tools/call` (docs/mcp.md), and the
 * tasks a `tools/call` with `task` creates: `tasks/get`, `tasks/result`, `tasks/cancel`, each a read
 * or cancel of the task's run (src/mcp/tasks.ts), so any process's server answers any task. The
 * client's `notifications/cancelled` names a call served by another request's server, so it is
 * routed through the process's InflightCalls (and the run's idempotency key across processes).
 */
export function createLegacyMcpServer(options: LegacyMcpServerOptions): Server {
  const { services, viewer, sessionId, inflight } = options;
  /** The SDK answers a thrown error with its message: anything but an McpError is logged and answered as internal. */
  const guarded =
    <A extends unknown[], R>(handler: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await handler(...args);
      } catch (error) {
        if (error instanceof McpError) throw error;
        services.log.error({ err: error }, 'mcp: internal error');
        throw new McpError(ErrorCode.InternalError, 'Internal server error');
      }
    };
  const server = new Server(
    { name: 'circuit-service', title: 'Circuit Service', version: options.version },
    {
      // Tasks (protocol 2025-11-25): a tools/call with `task` answers a task backed by its run (src/mcp/tasks.ts).
      capabilities: { tools: { listChanged: false }, tasks: { cancel: {}, requests: { tools: { call: {} } } } },
      instructions: INSTRUCTIONS,
    },
  );

  server.setRequestHandler(
    ListToolsRequestSchema,
    guarded(async () => ({ tools: await listTools(services, viewer) })),
  );

  server.setRequestHandler(
    CallToolRequestSchema,
    guarded(async (request, extra) => {
      const tool = await findCircuitTool(services, viewer, request.params.name);
      if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      const key = callKey(viewer, sessionId, extra.requestId);
      if (request.params.task) return createToolTask(services, viewer, tool, request.params.arguments, key);
      return callCircuitTool(
        {
          services,
          viewer,
          inflight,
          key,
          progressToken: extra._meta?.progressToken,
          signal: extra.signal,
          sendProgress: (params) => extra.sendNotification({ method: 'notifications/progress', params }),
          close: options.close,
        },
        tool,
        request.params.arguments,
      );
    }),
  );

  server.setRequestHandler(
    GetTaskRequestSchema,
    guarded(async (request) => getTask(viewer, request.params.taskId)),
  );
  server.setRequestHandler(
    GetTaskPayloadRequestSchema,
    guarded(async (request, extra) => taskResult(services, viewer, request.params.taskId, extra.signal)),
  );
  server.setRequestHandler(
    CancelTaskRequestSchema,
    guarded(async (request) => cancelTask(services, viewer, request.params.taskId)),
  );

  // Replaces the SDK's own handler, which only knows this server's requests (none, here).
  server.setNotificationHandler(CancelledNotificationSchema, (notification) => {
    const { requestId } = notification.params;
    if (requestId === undefined) return;
    inflight
      .cancel(services, viewer, callKey(viewer, sessionId, requestId))
      .catch((error: unknown) => services.log.error({ err: error }, 'mcp: could not cancel a call'));
  });

  return server;
}
