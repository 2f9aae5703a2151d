/** What an API token may do; a token created without scopes may do all of it. No imports: the CLI's --help reads it. */
export const TOKEN_SCOPES = [
  'runs:read',
  'runs:write',
  'circuits:read',
  'circuits:write',
  'boards:write',
  'webhooks:write',
  'schedules:write',
] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];
