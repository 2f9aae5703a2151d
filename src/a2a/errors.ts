import { A2AError, JsonRpcTransportError, RequestMalformedError, TaskNotFoundError, type A2AErrorType } from './sdk';
import { AppError } from '../errors';
import type { Logger } from '../logger';

/**
 * JSON-RPC codes of the service's refusals that A2A has no error for: the implementation-defined
 * server-error range, one code per kind of refusal, the service's own code first in the message.
 */
const REFUSAL_CODES: Partial<Record<AppError['code'], number>> = {
  Unauthorized: -32030,
  NotAllowed: -32031,
  InsufficientCredits: -32032,
  RateLimited: -32033,
  Conflict: -32034,
  BudgetExceeded: -32035,
};

/** A refusal of the request itself (the message, its input, its skill): invalid params (-32602). */
export const malformed = (message: string) => new RequestMalformedError({ message });

/** Any task id that is not one of the caller's runs: no hint whether it exists. */
export const taskNotFound = (taskId: string) =>
  new TaskNotFoundError({ message: `Task not found: ${taskId.slice(0, 100)}` });

/**
 * An error thrown while answering as the A2A error the SDK frames: A2A errors as they are, the
 * service's refusals with their code in the message (`"NotAllowed: …"`), and anything else as a
 * generic internal error (logged, never shown).
 */
export function toA2aError(error: unknown, log: Logger): A2AErrorType {
  if (error instanceof A2AError) return error;
  if (error instanceof AppError) {
    const message = `${error.code}: ${error.message}`;
    if (error.code === 'BadClientData') return new RequestMalformedError({ message, metadata: { code: error.code } });
    if (error.code === 'NotFound') return new RequestMalformedError({ message, metadata: { code: error.code } });
    const code = REFUSAL_CODES[error.code];
    if (code !== undefined) return new JsonRpcTransportError({ jsonrpc: '2.0', id: null, error: { code, message } });
  }
  log.error({ err: error }, 'internal error in an A2A request');
  return new JsonRpcTransportError({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } });
}
