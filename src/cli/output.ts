import type { CliIo } from './io';

/** An error meant for the CLI user: printed as one line on stderr, exit with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export function printJson(io: Pick<CliIo, 'stdout'>, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export interface ListOutput {
  meta: Record<string, unknown>;
  data: Record<string, unknown>[];
}

/** A cell as one short line: dates as ISO, objects as compact JSON, long text cut. */
function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  const text =
    value instanceof Date ? value.toISOString() : typeof value === 'object' ? JSON.stringify(value) : String(value);
  const line = oneLine(text);
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

/** `columns` of each row as aligned text, a header first; an empty list prints only the header. */
export function formatTable(rows: Record<string, unknown>[], columns: readonly string[]): string {
  const cells = [columns.map((c) => c.toUpperCase()), ...rows.map((row) => columns.map((c) => cell(row[c])))];
  const widths = columns.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  return cells
    .map((r) => r.map((text, i) => (i === r.length - 1 ? text : text.padEnd(widths[i]))).join('  '))
    .join('\n');
}

/** A list command's answer: the JSON list shape, or with `--table` the chosen columns of its rows. */
export function printList(
  io: Pick<CliIo, 'stdout'>,
  list: ListOutput,
  options: { table?: boolean },
  columns: readonly string[],
): void {
  if (!options.table) return printJson(io, list);
  io.stdout.write(`${formatTable(list.data, columns)}\n`);
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/**
 * The one line a failed command prints. Domain errors (AppError) and CLI errors say what is wrong
 * in their own words; anything else is unexpected and says so, still on one line.
 */
export function describeError(error: unknown): { message: string; exitCode: number } {
  if (error instanceof CliError) return { message: oneLine(error.message), exitCode: error.exitCode };
  // By name, not instanceof: loading graphql here would slow every command, --help included.
  if (error instanceof Error && error.name === 'GraphQLError') return { message: oneLine(error.message), exitCode: 1 };
  const message = error instanceof Error ? error.message : String(error);
  return { message: `unexpected error: ${oneLine(message || (error as Error)?.name || 'unknown')}`, exitCode: 1 };
}
