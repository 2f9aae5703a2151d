import crypto from 'node:crypto';
import type { CallToolResult, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { limitRunCreation } from '../ratelimit';
import { AppError } from '../errors';
import type { User } from '../models';
import { CircuitRun } from '../models/CircuitRun';
import type { RunError } from '../domain/runs';
import type { CircuitDefinition } from '../domain/definition';
import type { ApiServices } from '../graphql/context';
import { cancelOwnRun, type InflightCalls } from './inflight-calls';
import { followRun, type RunFollower } from './follow-run';
import { outputContract, type CircuitTool } from './tools';

/**
 * The Idempotency-Key of a call (a call is idempotent per request id): the caller, the MCP
 * session the service gave the client at `initialize`, and the JSON-RPC request id. The session is
 * in it because clients number their requests from 0 in every session; without one (a client that
 * drops the header) the user and request id alone. Keys are per user in the store as well.
 */
export function callKey(viewer: User, sessionId: string | undefined, requestId: RequestId): string {
  const digest = crypto
    .createHash('sha256')
    .update(`${viewer.uid}\n${sessionId ?? ''}\n${JSON.stringify(requestId)}`)
    .digest('base64url');
  return `mcp-${digest}`;
}

/** `signal`: aborted when this request's HTTP response closed: stop waiting (the run goes on). */
export interface CallContext extends RunFollower {
  services: ApiServices;
  viewer: User;
  inflight: InflightCalls;
  key: string;
  /** Ends this request's HTTP response without an answer. */
  close(): void;
}

type JsonObject = Record<string, unknown>;
const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function errorResult(code: string, message: string, runUid?: string): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: `${code}: ${message}` }],
    ...(runUid ? { _meta: { run_uid: runUid } } : {}),
  };
}

/** A COMPLETED run's output as MCP content: `structuredContent` an object (a non-object wrapped as `{output}`) and the JSON as text. */
export function completedResult(output: unknown, wrap: boolean, runUid: string): CallToolResult {
  const structured = wrap ? { output: output ?? null } : (output as JsonObject);
  return {
    content: [{ type: 'text', text: JSON.stringify(output ?? null) }],
    structuredContent: structured,
    _meta: { run_uid: runUid },
  };
}

/**
 * The tool result of a run that has ended: its output when COMPLETED (shaped by the version's output
 * contract, see outputContract), else `isError` with its error code and message.
 */
export async function endedRunResult(
  runUid: string,
  definition: CircuitDefinition | undefined,
): Promise<CallToolResult> {
  const ended = await CircuitRun.findByPk(runUid, { attributes: ['uid', 'state', 'result_blob', 'error'] });
  if (ended?.state === 'COMPLETED') {
    const output = (ended.result_blob as { output?: unknown } | null)?.output;
    // With an output schema its type decides the shape (the listed outputSchema); without, the value does.
    const contract = definition ? outputContract(definition) : undefined;
    return completedResult(output, contract ? contract.wrapped : !isObject(output), runUid);
  }
  const error = (ended?.error ?? null) as RunError | null;
  return errorResult(error?.code ?? 'Internal', error?.message ?? `the run ended ${ended?.state ?? 'unknown'}`, runUid);
}

/**
 * `tools/call` (docs/mcp.md): an ordinary run of the circuit's primary version, created by the same
 * command as a REST query (policy, input validation, credits, idempotency, "my runs"), then waited
 * for on the run's event stream — no database connection is held while it waits — sending each step
 * event as `notifications/progress` when the client gave a progress token. Refusals (input,
 * credits, policy) and EXCEPTION runs are tool errors (`isError`), not protocol errors.
 */
export async function callCircuitTool(
  ctx: CallContext,
  tool: CircuitTool,
  args: JsonObject | undefined,
): Promise<CallToolResult> {
  const { services, viewer } = ctx;
  const call = ctx.inflight.register(ctx.key, ctx.close);
  try {
    let run: CircuitRun;
    try {
      // The same per-token limit as a REST or GraphQL query; a tool result has no headers to carry RateLimit-*.
      await limitRunCreation(services.runRateLimiter, viewer, {});
      ({ run } = await services.runs.create(viewer, {
        adaptorUid: tool.adaptorUid,
        input: args ?? {},
        idempotencyKey: ctx.key,
      }));
    } catch (error) {
      if (error instanceof AppError) return errorResult(error.code, error.message);
      throw error;
    }
    call.runUid = run.uid;
    if (call.canceled) {
      await cancelOwnRun(services, viewer, run.uid);
      return errorResult('Canceled', 'the call was cancelled', run.uid);
    }
    services.log.debug({ run: run.uid, tool: tool.name }, 'mcp tool call started a run');

    const { definition } = await followRun(services, run.uid, run.circuit_version_uid, ctx);
    if (ctx.signal.aborted) return errorResult('Canceled', 'the request was closed before the run ended', run.uid);

    return await endedRunResult(run.uid, definition);
  } finally {
    ctx.inflight.unregister(ctx.key, call);
  }
}
