import { Op, literal, type WhereOptions } from 'sequelize';
import type { User } from '../models';

/**
 * A visibility rule over one row and the viewer, written once and read three ways: as a predicate
 * on a loaded row (`permits`), as SQL over a table alias (`ruleSql`) and as a Sequelize where
 * clause (`ruleWhere`). A policy states each action's rule; lists, counts and search filter
 * through the same rule, so they cannot disagree with the object endpoints.
 */
export type Rule =
  | boolean
  | { flag: string } // the row's boolean column is true
  | { owner: true } // the row's owner column is the viewer
  | { viewer: 'signedIn' | 'admin' }
  | { not: Rule }
  | { all: Rule[] }
  | { any: Rule[] };

/** Which column holds the owner's uid (`uid` for users themselves). */
export interface RuleTable {
  ownerColumn: string;
}

export const OWNER: Rule = { owner: true };
export const ADMIN: Rule = { viewer: 'admin' };
export const SIGNED_IN: Rule = { viewer: 'signedIn' };
export const flag = (column: string): Rule => ({ flag: column });
export const not = (rule: Rule): Rule => ({ not: rule });
export const all = (...rules: Rule[]): Rule => ({ all: rules });
export const any = (...rules: Rule[]): Rule => ({ any: rules });

/** A rule with the viewer's part decided: only row terms are left (`owner` becomes the viewer's uid). */
type Bound = boolean | { flag: string } | { ownerIs: string } | { not: Bound } | { all: Bound[] } | { any: Bound[] };

function bind(rule: Rule, viewer: User | null): Bound {
  if (typeof rule === 'boolean') return rule;
  if ('flag' in rule) return rule;
  if ('owner' in rule) return viewer ? { ownerIs: viewer.uid } : false;
  if ('viewer' in rule) return rule.viewer === 'admin' ? viewer?.is_admin === true : viewer !== null;
  if ('not' in rule) {
    const inner = bind(rule.not, viewer);
    return typeof inner === 'boolean' ? !inner : { not: inner };
  }
  const isAll = 'all' in rule;
  const parts: Bound[] = [];
  for (const part of (isAll ? rule.all : rule.any).map((r) => bind(r, viewer))) {
    if (part === !isAll) return !isAll; // a false in all(), a true in any(), decides
    if (part !== isAll) parts.push(part); // a true in all(), a false in any(), drops out
  }
  if (parts.length === 0) return isAll;
  if (parts.length === 1) return parts[0];
  return isAll ? { all: parts } : { any: parts };
}

/** The rule applied to one loaded row. */
export function permits(rule: Rule, table: RuleTable, viewer: User | null, row: object): boolean {
  const value = (column: string) => (row as Record<string, unknown>)[column];
  const test = (b: Bound): boolean => {
    if (typeof b === 'boolean') return b;
    if ('flag' in b) return value(b.flag) === true;
    if ('ownerIs' in b) return value(table.ownerColumn) === b.ownerIs;
    if ('not' in b) return !test(b.not);
    return 'all' in b ? b.all.every(test) : b.any.some(test);
  };
  return test(bind(rule, viewer));
}

/**
 * The rule as SQL over `alias`; bind the replacements alongside your own. With no viewer it names
 * no parameter, and a negated flag reads `NOT alias.flag` (the partial indexes of migration 0003
 * are `WHERE NOT is_private`, which the planner matches only in that form).
 */
export function ruleSql(
  rule: Rule,
  table: RuleTable,
  viewer: User | null,
  alias: string,
): { sql: string; replacements: Record<string, unknown> } {
  const replacements: Record<string, unknown> = {};
  const sql = (b: Bound): string => {
    if (typeof b === 'boolean') return b ? 'TRUE' : 'FALSE';
    if ('flag' in b) return `${alias}.${b.flag}`;
    if ('ownerIs' in b) {
      replacements.listViewerUid = b.ownerIs;
      return `${alias}.${table.ownerColumn} = :listViewerUid`;
    }
    if ('not' in b) return `NOT ${sql(b.not)}`;
    const parts = ('all' in b ? b.all : b.any).map(sql);
    return `(${parts.join('all' in b ? ' AND ' : ' OR ')})`;
  };
  return { sql: sql(bind(rule, viewer)), replacements };
}

/** The rule as a Sequelize where clause on the table's model. */
export function ruleWhere<T>(rule: Rule, table: RuleTable, viewer: User | null): WhereOptions<T> {
  const where = (b: Bound): WhereOptions => {
    if (b === true) return {};
    if (b === false) return { [Op.and]: [literal('FALSE')] };
    if ('flag' in b) return { [b.flag]: true };
    if ('ownerIs' in b) return { [table.ownerColumn]: b.ownerIs };
    if ('not' in b)
      return typeof b.not === 'object' && 'flag' in b.not ? { [b.not.flag]: false } : { [Op.not]: where(b.not) };
    return 'all' in b ? { [Op.and]: b.all.map(where) } : { [Op.or]: b.any.map(where) };
  };
  return where(bind(rule, viewer)) as WhereOptions<T>;
}
