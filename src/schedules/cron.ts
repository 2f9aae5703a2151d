import { CronExpressionParser, type CronExpression } from 'cron-parser';
import { AppError, badInput } from '../errors';

/** A schedule never fires more often than this. */
export const MIN_FIRE_INTERVAL_MS = 10_000;
/**
 * A schedule's next fire must come within this: the search for it is bounded in steps (cron-parser
 * stops at its end date) and so in time (~10-20 ms for the sparsest expression), where an unbounded
 * search for a rare one (`0 0 0 * 2 1#5`: a fifth Monday in February, next in 2044) holds the event
 * loop for a second. A year and a day lets every yearly schedule through.
 */
export const MAX_FIRST_FIRE_MS = 367 * 24 * 3600_000;
/**
 * Consecutive fire times checked against the minimum interval: enough to cover a whole minute of a
 * seconds field, within a day of the first fire (each search is bounded by that day's end). Rarer
 * close pairs are stopped when firing (src/schedules/fire.ts).
 */
const CHECKED_FIRES = 60;
const CHECKED_SPAN_MS = 24 * 3600_000;
const MAX_CRON_LENGTH = 200;

function isTimezone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks a schedule's cron (5 fields, or 6 with a leading seconds field, as cron-parser reads them)
 * and IANA timezone, and that no two fires come closer than 10 s. Throws BadClientData naming the field.
 */
export function checkSchedule(cron: string, timezone: string): void {
  if (typeof timezone !== 'string' || timezone.length > 64 || !isTimezone(timezone))
    throw badInput('timezone must be an IANA time zone such as UTC or Europe/Paris', { field: 'timezone' });
  if (typeof cron !== 'string' || cron.length > MAX_CRON_LENGTH)
    throw badInput(`cron must be a cron expression of at most ${MAX_CRON_LENGTH} characters`, { field: 'cron' });
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6)
    throw badInput('cron must have 5 fields (minute hour day month weekday), or 6 with a leading seconds field', {
      field: 'cron',
    });
  let fires: Date[];
  try {
    const now = new Date();
    const first = firstFire(cron, timezone, now);
    if (!first)
      throw badInput('cron must fire within a year: its next fire is later, or cannot be found quickly', {
        field: 'cron',
      });
    fires = [first];
    const following = CronExpressionParser.parse(cron, {
      tz: timezone,
      currentDate: first,
      endDate: new Date(first.getTime() + CHECKED_SPAN_MS),
    });
    while (fires.length < CHECKED_FIRES) {
      const next = nextWithin(following);
      if (!next) break;
      fires.push(next);
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw badInput(`cron is not valid: ${(error as Error).message}`.slice(0, 300), { field: 'cron' });
  }
  for (let i = 1; i < fires.length; i++) {
    if (fires[i].getTime() - fires[i - 1].getTime() < MIN_FIRE_INTERVAL_MS) {
      throw badInput(`cron fires more often than every ${MIN_FIRE_INTERVAL_MS / 1000} s`, { field: 'cron' });
    }
  }
}

/** The next fire of a bounded search; null past its end date (cron-parser throws "Out of the time span range" there). */
function nextWithin(expression: CronExpression): Date | null {
  try {
    return expression.next().toDate();
  } catch (error) {
    if (/time span range/i.test((error as Error).message)) return null;
    throw error;
  }
}

function firstFire(cron: string, timezone: string, after: Date): Date | null {
  return nextWithin(
    CronExpressionParser.parse(cron, {
      tz: timezone,
      currentDate: after,
      endDate: new Date(after.getTime() + MAX_FIRST_FIRE_MS),
    }),
  );
}

/** The next fire time after `after`; null when there is none. */
export function nextFireAt(cron: string, timezone: string, after: Date = new Date()): Date | null {
  try {
    return firstFire(cron, timezone, after);
  } catch {
    return null;
  }
}

/** Agenda may start a fire a moment before or after its instant. */
const FIRE_TOLERANCE_MS = 1_000;

/**
 * The scheduled instant a fire started at `startedAt` stands for: the latest fire time up to a
 * moment after it (fires are at least 10 s apart, so the nearest one is unambiguous). Two fires of
 * one instant (a lock taken over, a timer a millisecond early) name the same instant.
 */
export function scheduledInstant(cron: string, timezone: string, startedAt: Date): Date {
  const expression = CronExpressionParser.parse(cron, {
    tz: timezone,
    currentDate: new Date(startedAt.getTime() + FIRE_TOLERANCE_MS),
  });
  return expression.prev().toDate();
}
