import type { AppError, ErrorCode, OAuthError, OAuthErrorCode } from './errors';

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

/** The status of each OAuth error where it is answered directly (token and registration endpoints, RFC 6749 5.2, RFC 7591 3.2.2). */
export const OAUTH_ERROR_STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  invalid_scope: 400,
  invalid_target: 400,
  access_denied: 403,
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  temporarily_unavailable: 429,
};

/** An OAuth error as the token and registration endpoints answer it. */
export function oauthErrorAnswer(error: OAuthError): {
  status: number;
  body: { error: OAuthErrorCode; error_description: string };
} {
  return { status: OAUTH_ERROR_STATUS[error.code], body: { error: error.code, error_description: error.description } };
}
