import type { CircuitRun } from '../models/CircuitRun';
import { canonicalJson } from './step-cache';

export type StepComparison = 'same' | 'changed' | 'added' | 'removed';

export interface RunComparison {
  output: { status: 'same' | 'changed'; a: unknown; b: unknown };
  steps: Record<string, { status: StepComparison; a: unknown; b: unknown }>;
}

interface ResultBlob {
  output?: unknown;
  steps?: Record<string, { output?: unknown }>;
}

const same = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

/**
 * GET /circuit-runs/{a}/compare/{b} (docs/runs.md, Replay and compare): the two runs' outputs and each step's output,
 * from their result_blobs (a run that is not COMPLETED has none: its output is null and it has no
 * steps). A step only in b is `added`, only in a `removed`; outputs are compared as JSON values.
 */
export function compareRuns(a: Pick<CircuitRun, 'result_blob'>, b: Pick<CircuitRun, 'result_blob'>): RunComparison {
  const blobA = (a.result_blob ?? {}) as ResultBlob;
  const blobB = (b.result_blob ?? {}) as ResultBlob;
  const outputA = blobA.output ?? null;
  const outputB = blobB.output ?? null;
  const stepsA = blobA.steps ?? {};
  const stepsB = blobB.steps ?? {};
  const steps: RunComparison['steps'] = {};
  for (const id of new Set([...Object.keys(stepsA), ...Object.keys(stepsB)])) {
    const inA = Object.prototype.hasOwnProperty.call(stepsA, id);
    const inB = Object.prototype.hasOwnProperty.call(stepsB, id);
    const valueA = inA ? (stepsA[id]?.output ?? null) : null;
    const valueB = inB ? (stepsB[id]?.output ?? null) : null;
    const status: StepComparison = !inA ? 'added' : !inB ? 'removed' : same(valueA, valueB) ? 'same' : 'changed';
    steps[id] = { status, a: valueA, b: valueB };
  }
  return { output: { status: same(outputA, outputB) ? 'same' : 'changed', a: outputA, b: outputB }, steps };
}
