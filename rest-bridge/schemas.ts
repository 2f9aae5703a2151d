import type { JsonSchema, QueryParameter } from './route';

const nouns = new WeakMap<JsonSchema, string>();

/**
 * A path parameter naming a `noun` by uid (UUID). A value that is not a uid names nothing, so the
 * edge answers it as `<noun> not found` (404, like any unknown uid) without asking the database.
 */
export function uidParam(noun: string): JsonSchema {
  const schema = { type: 'string', format: 'uuid' };
  nouns.set(schema, noun);
  return schema;
}

/** What a path parameter names, for its 404. */
export function nounOf(schema: JsonSchema | undefined): string | undefined {
  return schema ? nouns.get(schema) : undefined;
}

/** A uid in a body: a string; one that names nothing (malformed included) is 404 from the operation. */
export const BODY_UID: JsonSchema = { type: 'string', description: 'A uid' };

/** Largest value a GraphQL Int carries: larger numbers are refused at the edge, not by GraphQL. */
const INT_MAX = 2_147_483_647;

/** `limit` and `page` of a paginated list; `maxLimit` is where `limit` is capped (not refused). */
export function pageQuery(maxLimit = 100, defaultLimit = 10): Record<string, QueryParameter> {
  return {
    limit: {
      schema: { type: 'integer', minimum: 1, maximum: INT_MAX, default: defaultLimit },
      description: `Items per page (default ${defaultLimit}; larger values are capped at ${maxLimit})`,
    },
    page: {
      schema: { type: 'integer', minimum: 1, maximum: INT_MAX, default: 1 },
      description: '1-based page number (default 1)',
    },
  };
}
