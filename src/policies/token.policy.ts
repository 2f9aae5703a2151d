import type { User } from '../models';
import type { TokenScope } from '../domain/token-scopes';

/**
 * What an API token may do (docs/tokens.md). A viewer without `tokenGrant` (a session, a password, the
 * service acting for a user) has the user's full rights; a token's grant can only take rights away,
 * never add any. Every transport reaches these checks: GraphQL root fields (and through them REST and
 * graphql-sse) by ROOT_FIELD_SCOPES, and every run start (MCP and schedules too) by tokenMayStartRun.
 */

/**
 * The scope each root field needs from a token. Fields not named need none (the caller's own
 * profile, balance and ledger, boards and blobs to read, search, schedules to read). A field added
 * later that changes something must be named here: test/tokens.scopes.table.test.ts checks that
 * every Mutation field is.
 */
export const ROOT_FIELD_SCOPES: Record<'Query' | 'Mutation' | 'Subscription', Readonly<Record<string, TokenScope>>> = {
  Query: {
    circuit: 'circuits:read',
    circuitByName: 'circuits:read',
    circuitAlias: 'circuits:read',
    circuitAliasHistory: 'circuits:read',
    circuitAliases: 'circuits:read',
    circuitClientModule: 'circuits:read',
    circuitEmbeds: 'circuits:read',
    circuitMetrics: 'circuits:read',
    circuitPing: 'circuits:read',
    circuitPrimaryVersion: 'circuits:read',
    circuitStarred: 'circuits:read',
    circuitVersions: 'circuits:read',
    explainCircuit: 'circuits:read',
    starredCircuits: 'circuits:read',
    userCircuits: 'circuits:read',
    circuitRun: 'runs:read',
    circuitRuns: 'runs:read',
    viewerRuns: 'runs:read',
    circuitVersionRuns: 'runs:read',
    compareCircuitRuns: 'runs:read',
    circuitRunWebhookDeliveries: 'runs:read',
    circuitBatch: 'runs:read',
    circuitBatchRuns: 'runs:read',
    estimateCircuitAdaptor: 'runs:read',
    // Read on first use, the signing secret is created then: it is the webhooks' to hand out.
    webhookSecret: 'webhooks:write',
  },
  Mutation: {
    queryCircuitAdaptor: 'runs:write',
    cancelCircuitRun: 'runs:write',
    replayCircuitRun: 'runs:write',
    resolveApproval: 'runs:write',
    signalCircuitRun: 'runs:write',
    createCircuitBatch: 'runs:write',
    cancelCircuitBatch: 'runs:write',
    cancelCircuitRuns: 'runs:write',
    replayCircuitRuns: 'runs:write',
    circuitRunEventsUrl: 'runs:read',
    createCircuit: 'circuits:write',
    updateCircuit: 'circuits:write',
    deprecateCircuit: 'circuits:write',
    publishCircuitVersion: 'circuits:write',
    setPrimaryCircuitVersion: 'circuits:write',
    setCircuitAlias: 'circuits:write',
    deleteCircuitAlias: 'circuits:write',
    createCircuitMetric: 'circuits:write',
    starCircuit: 'circuits:write',
    unstarCircuit: 'circuits:write',
    createBoard: 'boards:write',
    updateBoard: 'boards:write',
    deleteBoard: 'boards:write',
    addCircuitToBoard: 'boards:write',
    removeCircuitFromBoard: 'boards:write',
    starBoard: 'boards:write',
    unstarBoard: 'boards:write',
    createCircuitSchedule: 'schedules:write',
    updateCircuitSchedule: 'schedules:write',
    deleteCircuitSchedule: 'schedules:write',
  },
  Subscription: { circuitRunEvents: 'runs:read', circuitRunUpdated: 'runs:read' },
};

/** The scopes the viewer's token lacks of `needed`; empty when it has them all (or there is no token). */
export function missingScopes(viewer: User | null, needed: readonly TokenScope[]): TokenScope[] {
  const scopes = viewer?.tokenGrant?.scopes;
  if (!scopes) return [];
  return needed.filter((scope) => !scopes.includes(scope));
}

/** The 403 message naming what the token lacks, or null when it lacks nothing. */
export function scopeRefusal(viewer: User | null, needed: readonly TokenScope[]): string | null {
  const missing = missingScopes(viewer, needed);
  if (missing.length === 0) return null;
  return `This token lacks the scope${missing.length === 1 ? '' : 's'} ${missing.join(', ')}`;
}

/** The scope a GraphQL root field needs from a token, if any. */
export function rootFieldScope(type: string, field: string): TokenScope | undefined {
  return (ROOT_FIELD_SCOPES as Record<string, Record<string, TokenScope> | undefined>)[type]?.[field];
}

/**
 * Starting a run of `circuitUid` with the viewer's token: `runs:write`, `webhooks:write` when the run
 * posts to a webhook, and the circuit on the token's allow-list. The 403 message names what is missing.
 */
export function tokenMayStartRun(
  viewer: User | null,
  circuitUid: string,
  options: { webhook: boolean },
): { allowed: boolean; message?: string } {
  const refusal = scopeRefusal(viewer, options.webhook ? ['runs:write', 'webhooks:write'] : ['runs:write']);
  if (refusal) return { allowed: false, message: refusal };
  const allowList = viewer?.tokenGrant?.circuitUids;
  if (allowList && !allowList.includes(circuitUid))
    return { allowed: false, message: `This token may not run the circuit ${circuitUid}` };
  return { allowed: true };
}

/**
 * Submitting a batch: a batch is admitted in one statement against the balance, while a token's day cap
 * is reserved run by run (src/credits/token-spend.ts), so a capped token sends its runs as queries.
 */
export function tokenMaySubmitBatch(viewer: User | null): { allowed: boolean; message?: string } {
  if (viewer?.tokenGrant?.maxCreditsPerDay == null) return { allowed: true };
  return {
    allowed: false,
    message:
      'This token has a daily credit cap (max_credits_per_day): it cannot submit batches; send its runs as queries',
  };
}

/**
 * Creating API tokens: a session, a password, or a token without any limit. A limited token may not:
 * it could otherwise mint a token without its limits.
 */
export function tokenMayCreateTokens(viewer: User | null): { allowed: boolean; message?: string } {
  const grant = viewer?.tokenGrant;
  if (
    !grant ||
    (grant.scopes === null && grant.expiresAt === null && grant.circuitUids === null && grant.maxCreditsPerDay === null)
  )
    return { allowed: true };
  return {
    allowed: false,
    message: 'Only a token without scopes, expiry, circuit list or credit cap may create tokens',
  };
}
