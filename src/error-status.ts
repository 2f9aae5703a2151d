import type { AppError, ErrorCode } from './errors';

/**
 * The one table from an error code to its HTTP status (the API contract's table, with the service's own codes added; docs/api-conventions.md), for
 * every transport: REST, GraphQL over HTTP and SSE, MCP and the /settings pages.
 */
export const ERROR_STATUS: Record<ErrorCode, number> = {
  BadClientData: 400,
  Unauthorized: 401,
  InsufficientCredits: 402,
  BudgetExceeded: 402,
  NotAllowed: 403,
  NotFound: 404,
  Conflict: 409,
  IdempotencyKeyReused: 422,
  PayloadTooLarge: 413,
  RequestTimeout: 408,
  UnsupportedMediaType: 415,
  RateLimited: 429,
  Internal: 500,
};

/** An error as every HTTP answer carries it: its status and the envelope `{"error":{"message","code"}}`. */
export function errorEnvelope(error: AppError | { code: ErrorCode; message: string }): {
  status: number;
  body: { error: { message: string; code: ErrorCode } };
} {
  return { status: ERROR_STATUS[error.code], body: { error: { message: error.message, code: error.code } } };
}
