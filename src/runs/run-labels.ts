import { Op, type WhereOptions } from 'sequelize';
import { badInput } from '../errors';
import { TAG } from '../domain/runs';

/** A run carries at most this many tags, each matching TAG. */
export const MAX_TAGS = 10;
export { TAG };
/** The most bytes a run's metadata takes as JSON. */
export const MAX_METADATA_BYTES = 4 * 1024;

/** The tags of a query, checked (null when none were sent); duplicates are kept once, in order. */
export function checkTags(tags: unknown, field = 'tags'): string[] | null {
  if (tags === undefined || tags === null) return null;
  if (!Array.isArray(tags)) throw badInput(`${field} must be an array of strings`, { field });
  if (tags.length > MAX_TAGS) throw badInput(`${field} may hold at most ${MAX_TAGS} tags`, { field });
  tags.forEach((tag, i) => {
    if (typeof tag !== 'string' || !TAG.test(tag)) {
      throw badInput(
        `${field}[${i}] must match ${TAG.source} (lower-case letters, digits and _ . : -, at most 64 characters)`,
        { field },
      );
    }
  });
  return [...new Set(tags as string[])];
}

/** The metadata of a query, checked (null when none was sent): an object of string values, ≤ 4 KiB as JSON. */
export function checkMetadata(metadata: unknown, field = 'metadata'): Record<string, string> | null {
  if (metadata === undefined || metadata === null) return null;
  if (typeof metadata !== 'object' || Array.isArray(metadata))
    throw badInput(`${field} must be an object of string values`, { field });
  for (const [key, value] of Object.entries(metadata)) {
    if (typeof value !== 'string') throw badInput(`${field}.${key} must be a string`, { field });
  }
  if (Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES) {
    throw badInput(`${field} may take at most ${MAX_METADATA_BYTES} bytes as JSON`, { field });
  }
  return { ...(metadata as Record<string, string>) };
}

/** A run filter of "my runs" (docs/batches-and-budgets.md, Tags and metadata), checked: a tag, metadata key/value pairs, a creation window. */
export interface RunLabelFilter {
  tag?: string | null;
  metadata?: Record<string, string> | null;
  createdAfter?: Date | null;
  createdBefore?: Date | null;
}

/**
 * The conditions (over `circuit_runs`) of a label filter, served by the GIN indexes of migration 0023
 * (`tags @> ARRAY[…]`, `metadata @> '{…}'`); an unknown tag or key simply matches nothing.
 */
export function labelFilterWhere(filter: RunLabelFilter, prefix = ''): WhereOptions {
  const where: Record<string, unknown> = {};
  if (filter.tag != null) {
    if (typeof filter.tag !== 'string' || !TAG.test(filter.tag))
      throw badInput(`${prefix}tag must match ${TAG.source}`, { field: `${prefix}tag` });
    where.tags = { [Op.contains]: [filter.tag] };
  }
  if (filter.metadata != null && (typeof filter.metadata !== 'object' || Object.keys(filter.metadata).length > 0))
    where.metadata = { [Op.contains]: checkMetadata(filter.metadata, `${prefix}metadata`) };
  const created: Record<symbol, Date> = {};
  if (filter.createdAfter) created[Op.gt] = filter.createdAfter;
  if (filter.createdBefore) created[Op.lt] = filter.createdBefore;
  if (Object.getOwnPropertySymbols(created).length > 0) where.created_at = created;
  return where as WhereOptions;
}
