import type { Migration } from './migration';

/**
 * When a circuit was deprecated: the `Deprecation` response header is that instant (RFC 9745,
 * `@<epoch-seconds>`). Circuits deprecated before this migration get their last update time.
 */
export const circuitDeprecatedAt: Migration = {
  name: '0010-circuit-deprecated-at',
  up: `
ALTER TABLE circuits ADD COLUMN deprecated_at timestamptz;
UPDATE circuits SET deprecated_at = updated_at WHERE is_deprecated;
`,
  down: `ALTER TABLE circuits DROP COLUMN deprecated_at;`,
};
