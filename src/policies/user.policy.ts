import type { User } from '../models';
import { ADMIN, OWNER, any, flag, not, permits, ruleSql, type Rule, type RuleTable } from './visibility';

const USERS: RuleTable = { ownerColumn: 'uid' };

/** A private profile is seen only by its owner and admins; search never shows it. */
const PROFILE_VISIBLE: Rule = any(OWNER, ADMIN, not(flag('is_private')));

export function profileVisible(viewer: User | null, user: User): boolean {
  return permits(PROFILE_VISIBLE, USERS, viewer, user);
}

/** profileVisible as SQL over a users alias. */
export function visibleProfilesSql(
  alias: string,
  viewer: User | null,
): { sql: string; replacements: Record<string, unknown> } {
  return ruleSql(PROFILE_VISIBLE, USERS, viewer, alias);
}
