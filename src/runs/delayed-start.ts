import { badInput } from '../errors';
import { MAX_START_DELAY_SECONDS } from '../domain/runs';

/**
 * An ISO 8601 instant: a calendar date, a time to the minute at least, and its offset (`Z` or ±hh:mm),
 * so that it names one instant whatever the server's time zone.
 */
const ISO_INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:[Zz]|[+-](\d{2}):?(\d{2}))$/;

/** `value` as the instant it names, or null when it is not an ISO 8601 instant (a 30 February, a 24:00, no offset). */
function parseInstant(value: unknown): Date | null {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value;
  if (typeof value !== 'string') return null;
  const match = ISO_INSTANT.exec(value);
  if (!match) return null;
  const [year, month, day, hour, minute, second, offsetHour, offsetMinute] = match
    .slice(1)
    .map((part) => (part === undefined ? 0 : Number(part)));
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return null;
  if (hour > 23 || minute > 59 || second > 59 || offsetHour > 23 || offsetMinute > 59) return null;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? null : at;
}

/** When a query or batch asks its runs to start later (docs/runs.md, Delayed start): an instant, or seconds from now. Unchecked. */
export interface RunStartArgs {
  /** `start_at`: an ISO 8601 instant, not in the past, at most a year ahead. */
  startAt?: unknown;
  /** `delay_s`: whole seconds from now, 1 to MAX_START_DELAY_SECONDS. */
  delaySeconds?: unknown;
}

/**
 * The instant the runs are to start, checked (null when neither `start_at` nor `delay_s` was sent):
 * the one place a query and a batch, through GraphQL or REST, are refused alike, naming the field.
 */
export function checkStart(args: RunStartArgs, now = Date.now()): Date | null {
  const { startAt, delaySeconds } = args;
  if (startAt != null && delaySeconds != null)
    throw badInput('start_at and delay_s cannot both be sent: one says when the run starts', { field: 'start_at' });
  if (delaySeconds != null) {
    if (
      typeof delaySeconds !== 'number' ||
      !Number.isSafeInteger(delaySeconds) ||
      delaySeconds < 1 ||
      delaySeconds > MAX_START_DELAY_SECONDS
    )
      throw badInput(`delay_s must be a whole number of seconds from 1 to ${MAX_START_DELAY_SECONDS} (a year)`, {
        field: 'delay_s',
      });
    return new Date(now + delaySeconds * 1000);
  }
  if (startAt == null) return null;
  const at = parseInstant(startAt);
  if (at === null)
    throw badInput('start_at must be an ISO 8601 instant with its offset, such as 2030-01-31T09:00:00Z', {
      field: 'start_at',
    });
  if (at.getTime() < now) throw badInput('start_at must not be in the past', { field: 'start_at' });
  if (at.getTime() > now + MAX_START_DELAY_SECONDS * 1000)
    throw badInput('start_at must be at most a year (365 days) ahead', { field: 'start_at' });
  return at;
}
