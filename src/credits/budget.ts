import { badInput } from '../errors';
import { MAX_BALANCE } from './grants';
import { RUN_BASE_CREDITS } from './holds';

/** A query's `max_credits` (docs/batches-and-budgets.md), checked: a whole number from the base credit to MAX_BALANCE; null when not sent. */
export function checkMaxCredits(value: unknown, field = 'max_credits'): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < RUN_BASE_CREDITS || value > MAX_BALANCE) {
    throw badInput(`${field} must be a whole number from ${RUN_BASE_CREDITS} to ${MAX_BALANCE}`, { field });
  }
  return value;
}

/**
 * A run's spend cap as its worker holds credits. Every credit a run can be charged is
 * held first (src/credits/holds.ts), so keeping what the run holds within `max_credits` keeps what it
 * costs there too; `reserve` is synchronous so steps running side by side cannot both pass the check.
 * `held` starts at what the run row holds when claimed (the base credit, plus holds of earlier attempts).
 */
export class SpendCap {
  constructor(
    private held: number,
    readonly max: number | null,
  ) {}

  /** False, reserving nothing, when holding `credits` more would pass the cap. */
  reserve(credits: number): boolean {
    if (this.max !== null && this.held + credits > this.max) return false;
    this.held += credits;
    return true;
  }

  /** A reservation whose hold the balance refused. */
  release(credits: number): void {
    this.held -= credits;
  }

  /** What the run is charged: its cost, never more than its cap (a provider may report more tokens than were held). */
  charge(cost: number): number {
    return this.max === null ? cost : Math.min(cost, this.max);
  }
}
