import type { Migration } from './migration';

/**
 * The authorization server behind `/mcp` (docs/oauth.md).
 *
 * - `oauth_clients`: clients that registered themselves (RFC 7591). Clients known by a Client ID
 *   Metadata Document have no row: their document is read at each authorization.
 * - `oauth_codes`: authorization codes, by hash, bound to the client, the redirect URI, the PKCE
 *   challenge and the user who approved. `used_at` makes a code single-use; `token_uid` is the API
 *   token it was exchanged for, revoked if the code is presented again.
 */
export const oauth: Migration = {
  name: '0040-oauth',
  up: `
CREATE TABLE oauth_clients (
  client_id text PRIMARY KEY,
  client_name text NOT NULL,
  redirect_uris text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE oauth_codes (
  code_hash text PRIMARY KEY,
  client_id text NOT NULL,
  client_name text NOT NULL,
  redirect_uri text NOT NULL,
  code_challenge text NOT NULL,
  resource text,
  scopes text[] NOT NULL,
  user_uid uuid NOT NULL REFERENCES users(uid) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  token_uid uuid REFERENCES api_tokens(uid) ON DELETE SET NULL
);
CREATE INDEX oauth_codes_expires_at ON oauth_codes (expires_at);
`,
  down: `
DROP TABLE oauth_codes;
DROP TABLE oauth_clients;
`,
};
