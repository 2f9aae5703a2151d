import { InvalidArgumentError } from 'commander';

/** `--credits 10`: a whole number ≥ 0 (commander reports a bad value on one line). */
export function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError('expected a whole number of at least 0.');
  return Number(value);
}

/** `--amount 5`: a whole number ≥ 1. */
export function positiveInteger(value: string): number {
  const parsed = wholeNumber(value);
  if (parsed < 1) throw new InvalidArgumentError('expected a whole number of at least 1.');
  return parsed;
}

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
