import { GraphQLError } from 'graphql';

/** An error meant for the CLI user: printed as one line on stderr, exit with `exitCode`. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
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
  if (error instanceof GraphQLError) return { message: oneLine(error.message), exitCode: 1 };
  const message = error instanceof Error ? error.message : String(error);
  return { message: `unexpected error: ${oneLine(message || (error as Error)?.name || 'unknown')}`, exitCode: 1 };
}
