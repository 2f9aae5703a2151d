import {
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { User } from '../models';
import type { ApiServices } from '../graphql/context';
import { callModernTool } from './modern-call';
import { cancelModernTask, getModernTask, TASKS_EXTENSION, updateModernTask } from './modern-tasks';
import { findCircuitTool, listTools } from './tools';

/** The revisions `/mcp` serves: 2026-07-28 here, the 2025 ones through the 1.x SDK (src/mcp/legacy.ts). */
export const MCP_PROTOCOL_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18'];

export interface ModernMcpServerOptions {
  services: ApiServices;
  version: string;
  viewer: User;
}

const INSTRUCTIONS =
  'Each tool runs a circuit of Circuit Service as an ordinary, charged run and answers its output. ' +
  'Tools are the circuits you own or have starred and may run. A run that waits for a signal or an ' +
  'approval asks you for it; clients declaring the tasks extension get a task (the run) at once.';

const taskParams = z.object({ taskId: z.string() });

/** Whether the request's envelope declares this client capability. */
function declares(ctx: ServerContext, check: (capabilities: Record<string, unknown>) => unknown): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.['io.modelcontextprotocol/clientCapabilities'];
  return (
    typeof capabilities === 'object' && capabilities !== null && Boolean(check(capabilities as Record<string, unknown>))
  );
}
const hasTasks = (ctx: ServerContext) =>
  declares(ctx, (capabilities) => (capabilities.extensions as Record<string, unknown> | undefined)?.[TASKS_EXTENSION]);
const hasFormElicitation = (ctx: ServerContext) =>
  declares(ctx, (capabilities) => {
    const elicitation = capabilities.elicitation as Record<string, unknown> | undefined;
    // An empty elicitation capability means form mode (the only mode before URL mode existed).
    return elicitation && (elicitation.form !== undefined || elicitation.url === undefined);
  });

function requireTasks(ctx: ServerContext): void {
  if (!hasTasks(ctx))
    throw new ProtocolError(ProtocolErrorCode.MissingRequiredClientCapability, 'Missing required client capability', {
      requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    });
}

/**
 * `server/discover` names every revision `/mcp` serves: the 2025 ones are reached by `initialize`
 * on the same URL, which the SDK's own answer (modern revisions only) would not tell a client.
 */
class CircuitMcpServer extends Server {
  constructor(...args: ConstructorParameters<typeof Server>) {
    super(...args);
    const self = this as unknown as { _ondiscover: () => Record<string, unknown> };
    const discover = self._ondiscover.bind(this);
    self._ondiscover = () => ({ ...discover(), supportedVersions: MCP_PROTOCOL_VERSIONS });
  }
}

/**
 * The MCP server for ONE 2026-07-28 request of one authenticated caller (the SDK's per-request
 * handler builds one per POST): `tools/list`, `tools/call` (src/mcp/modern-call.ts) and the tasks
 * extension's `tasks/get`, `tasks/update`, `tasks/cancel` (src/mcp/modern-tasks.ts).
 */
export function createModernMcpServer(options: ModernMcpServerOptions): Server {
  const { services, viewer } = options;
  const guarded =
    <A extends unknown[], R>(handler: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await handler(...args);
      } catch (error) {
        if (error instanceof ProtocolError) throw error;
        services.log.error({ err: error }, 'mcp: internal error');
        throw new ProtocolError(ProtocolErrorCode.InternalError, 'Internal server error');
      }
    };
  const server = new CircuitMcpServer(
    { name: 'circuit-service', title: 'Circuit Service', version: options.version },
    {
      capabilities: { tools: { listChanged: false }, extensions: { [TASKS_EXTENSION]: {} } },
      instructions: INSTRUCTIONS,
      supportedProtocolVersions: MCP_PROTOCOL_VERSIONS,
    },
  );

  server.setRequestHandler(
    'tools/list',
    guarded(async () => ({
      // Task support is the extension's, declared per request: no per-tool `execution` on this revision.
      tools: (await listTools(services, viewer)).map(({ execution: _execution, ...tool }) => tool),
    })),
  );

  server.setRequestHandler(
    'tools/call',
    guarded(async (request, ctx) => {
      const tool = await findCircuitTool(services, viewer, request.params.name);
      if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      const result = await callModernTool(
        {
          services,
          viewer,
          canElicit: hasFormElicitation(ctx),
          asTask: hasTasks(ctx),
          progressToken: ctx.mcpReq._meta?.progressToken,
          requestState: ctx.mcpReq.requestState(),
          inputResponses: ctx.mcpReq.inputResponses,
          signal: ctx.mcpReq.signal,
          sendProgress: (params) => ctx.mcpReq.notify({ method: 'notifications/progress', params }),
        },
        tool,
        request.params.arguments,
      );
      // A task (`resultType: "task"`) is the extension's result, which the SDK's types do not know.
      return result as CallToolResult;
    }),
  );

  server.setRequestHandler(
    'tasks/get',
    { params: taskParams },
    guarded(async (params, ctx) => {
      requireTasks(ctx);
      return { ...(await getModernTask(services, viewer, params.taskId)) };
    }),
  );
  server.setRequestHandler(
    'tasks/update',
    { params: taskParams },
    guarded(async (params, ctx) => {
      requireTasks(ctx);
      // The SDK lifts `inputResponses` out of the params into the request's context.
      return updateModernTask(services, viewer, params.taskId, ctx.mcpReq.inputResponses ?? {});
    }),
  );
  server.setRequestHandler(
    'tasks/cancel',
    { params: taskParams },
    guarded(async (params, ctx) => {
      requireTasks(ctx);
      return cancelModernTask(services, viewer, params.taskId);
    }),
  );

  return server;
}
