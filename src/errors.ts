import { GraphQLError } from 'graphql';

/**
 * Every error a client may see carries one of these codes; src/error-status.ts maps each
 * to its HTTP status. Anything thrown without a code is reported as Internal and its detail hidden.
 */
export const ERROR_CODES = [
  'BadClientData',
  'Unauthorized',
  'InsufficientCredits',
  // A run's max_credits would be passed; as a run's error.code, its step did not start.
  'BudgetExceeded',
  'NotAllowed',
  'NotFound',
  'Conflict',
  // An Idempotency-Key sent again with another request (422, as the IETF idempotency draft says).
  'IdempotencyKeyReused',
  'PayloadTooLarge',
  'RequestTimeout',
  'UnsupportedMediaType',
  'RateLimited',
  'Internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export class AppError extends GraphQLError {
  constructor(
    readonly code: ErrorCode,
    message: string,
    extra: Record<string, unknown> = {},
  ) {
    super(message, { extensions: { code, ...extra } });
  }
}

export const badInput = (message: string, extra?: Record<string, unknown>) =>
  new AppError('BadClientData', message, extra);
export const unauthorized = (message = 'A valid bearer token is required') => new AppError('Unauthorized', message);
export const notAllowed = (message = 'You are not allowed to do this') => new AppError('NotAllowed', message);
export const notFound = (what: string) => new AppError('NotFound', `${what} not found`);
export const conflict = (message: string) => new AppError('Conflict', message);
export const idempotencyKeyReused = () =>
  new AppError('IdempotencyKeyReused', 'This Idempotency-Key was already used with a different request');

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}

/** The error codes of OAuth 2.1 and its extensions (RFC 6749, 7591, 8707) that the authorization server answers. */
export const OAUTH_ERROR_CODES = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'unsupported_response_type',
  'invalid_scope',
  'invalid_target',
  'access_denied',
  'invalid_redirect_uri',
  'invalid_client_metadata',
  'temporarily_unavailable',
] as const;
export type OAuthErrorCode = (typeof OAUTH_ERROR_CODES)[number];

/** An OAuth refusal: answered as `{error, error_description}` (or on the client's redirect), never in the service's envelope. */
export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}
