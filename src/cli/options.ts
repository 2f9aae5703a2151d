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
