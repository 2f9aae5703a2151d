import { InvalidArgumentError, Option, type Command } from 'commander';
import { CliError } from './output';

/** `--credits 10`: a whole number ≥ 0 (commander reports a bad value on one line). */
export function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new InvalidArgumentError('expected a whole number of at least 0.');
  return Number(value);
}

/** `--amount 5`: a whole number ≥ 1. */
export function positiveInteger(value: string): number {
  const parsed = wholeNumber(value);
  if (parsed < 1) throw new InvalidArgumentError('expected a whole number of at least 1.');
  return parsed;
}

export interface AliasRoute {
  version_uid: string;
  weight: number;
}

/** `--route VERSION_UID=WEIGHT`, repeatable: the weight must be a whole number (the command checks the rest). */
export function parseRoute(value: string, previous: AliasRoute[] = []): AliasRoute[] {
  const match = /^([^=\s]+)=(\d{1,3})$/.exec(value);
  if (!match) throw new InvalidArgumentError('expected VERSION_UID=WEIGHT with a whole weight, e.g. 3f0c…=90.');
  return [...previous, { version_uid: match[1], weight: Number(match[2]) }];
}

/** Rows to skip for `--page` of `--limit`; a page past any real list is refused, not sent to PostgreSQL. */
export function pageWindow(
  options: { limit: number; page: number },
  maxLimit: number,
): { limit: number; offset: number } {
  if (options.limit > maxLimit) throw new CliError(`--limit must be at most ${maxLimit}`);
  const offset = (options.page - 1) * options.limit;
  if (offset > MAX_OFFSET) throw new CliError(`--page is too large (at most ${MAX_OFFSET} rows can be skipped)`);
  return { limit: options.limit, offset };
}

const MAX_OFFSET = 1_000_000_000;

/** `--expires-in 30d`: a duration in days (d), hours (h) or minutes (m), as milliseconds. */
export function duration(value: string): number {
  const match = /^(\d{1,6})([dhm])$/.exec(value);
  if (!match || Number(match[1]) < 1) throw new InvalidArgumentError('expected a duration such as 30d, 12h or 90m.');
  return Number(match[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000 }[match[2] as 'd' | 'h' | 'm'];
}

/** A repeatable option (`--scope a --scope b`, or `--scope a b`): its values in order. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * `--username <username>`, the one spelling of a user across the CLI, as an optional filter; `--user`, the
 * spelling the list commands once took, stays as a hidden alias so scripts that send it keep working.
 */
export function usernameFilter(command: Command, description: string): Command {
  return command
    .option('--username <username>', description)
    .addOption(new Option('--user <username>').hideHelp())
    .on('option:user', (value: string) => command.setOptionValue('username', value));
}
