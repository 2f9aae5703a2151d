import { GraphQLError } from 'graphql';
import { ErrorCode, isErrorCode } from '../errors';

export interface PublicError {
  code: ErrorCode;
  message: string;
  internal?: unknown;
}

interface ValidationFailure {
  property?: string;
  constraints?: Record<string, string>;
  children?: ValidationFailure[];
}

function describeValidation(failures: ValidationFailure[], prefix = ''): string {
  return failures
    .flatMap((f) => {
      const name = prefix + (f.property ?? '');
      const own = Object.values(f.constraints ?? {}).map((c) => c.replace(/^\S+/, name));
      return [...own, describeValidation(f.children ?? [], `${name}.`)].filter(Boolean);
    })
    .join('; ');
}

/**
 * Reduces any GraphQL error to a code a client may see. Errors of the request itself (parse,
 * validation, variable coercion, argument validation) are BadClientData; anything else without
 * a code is Internal and its message hidden.
 */
export function toPublicError(error: GraphQLError): PublicError {
  const code = error.extensions?.code;
  if (isErrorCode(code)) return { code, message: error.message };
  const original = error.originalError as (Error & { extensions?: Record<string, unknown> }) | undefined;
  if (original instanceof GraphQLError && isErrorCode(original.extensions?.code)) {
    return { code: original.extensions.code as ErrorCode, message: original.message };
  }
  const validationErrors = (error.extensions?.validationErrors ??
    (original as { validationErrors?: unknown })?.validationErrors) as ValidationFailure[] | undefined;
  if (Array.isArray(validationErrors)) {
    return { code: 'BadClientData', message: describeValidation(validationErrors) || 'Invalid input' };
  }
  // Errors without a path come from the request itself (e.g. variable coercion when the REST bridge
  // calls execute() directly, where Apollo's BAD_USER_INPUT code is never added), not from a resolver.
  if (
    code === 'BAD_USER_INPUT' ||
    code === 'GRAPHQL_VALIDATION_FAILED' ||
    code === 'GRAPHQL_PARSE_FAILED' ||
    !original ||
    !error.path
  ) {
    return { code: 'BadClientData', message: error.message };
  }
  return { code: 'Internal', message: 'Internal server error', internal: original };
}
