import '../debug-colors';
import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError, Help, type Option } from 'commander';
import { PROJECT_ROOT } from '../paths';
import { describeError } from './output';
import { processIo, type CliIo } from './io';
// Only command definitions here: each loads its implementation when it runs (./lazy), so that
// `--help` answers without sequelize, the models, the job queue or type-graphql.
import * as userCommands from './user/commands';
import * as tokenCommands from './token/commands';
import * as creditsCommands from './credits/commands';
import * as circuitCommands from './circuit/commands';
import * as versionCommands from './version/commands';
import * as aliasCommands from './alias/commands';
import * as blobCommands from './blob/commands';
import * as runCommands from './run/commands';
import * as scheduleCommands from './schedule/commands';
import * as migrate from './migrate';
import * as worker from './worker';

/**
 * `circuits <noun> <verb>`: operator commands on the service's database (docs/cli.md). Each prints
 * JSON on stdout; on error, one line on stderr and a non-zero exit.
 */
export function buildProgram(io: CliIo, workerStarted: () => void): Command {
  const program = new Command('circuits')
    // Help, version and usage errors go where the command's output goes; subcommands inherit it.
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .description(
      'Circuit Service administration. Uses DATABASE_URL, else the embedded PostgreSQL of DATA_DIR (default ./.data).',
    )
    .version(packageVersion(), '-V, --version', 'print the version')
    // `--version` after a subcommand is that command's own option (`version set-primary --version UID`).
    .enablePositionalOptions()
    // Subcommands inherit this: required options say so in --help.
    .configureHelp({
      optionDescription: (option: Option) =>
        `${new Help().optionDescription(option)}${option.mandatory ? ' (required)' : ''}`,
    })
    .showSuggestionAfterError()
    .exitOverride();

  const noun = (name: string, description: string) => program.command(name).description(description).exitOverride();
  userCommands.register(noun('user', 'list, inspect and manage users'), io);
  tokenCommands.register(noun('token', 'manage API tokens'), io);
  creditsCommands.register(noun('credits', 'grant and show credit balances'), io);
  circuitCommands.register(noun('circuit', 'list and create circuits'), io);
  versionCommands.register(noun('version', 'publish circuit versions and choose the primary one'), io);
  aliasCommands.register(noun('alias', 'manage version aliases'), io);
  blobCommands.register(noun('blob', 'manage blobs'), io);
  runCommands.register(noun('run', 'list, inspect, cancel and replay runs'), io);
  scheduleCommands.register(noun('schedule', 'list schedules'), io);
  migrate.register(program, io);
  worker.register(program, io, workerStarted);
  for (const command of program.commands) for (const sub of command.commands) sub.exitOverride();
  return program;
}

function packageVersion(): string {
  const { version } = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    version: string;
  };
  return version;
}

export interface CliOutcome {
  /** The process exit code. */
  code: number;
  /** `circuits worker` started: it runs on its own handles until a signal, so the process must not exit. */
  workerRunning: boolean;
}

/**
 * Parses argv (as process.argv: node, script, arguments…) and runs the command with `io` for its
 * environment, output and database.
 */
export async function runCli(argv: string[], io: CliIo): Promise<CliOutcome> {
  let workerRunning = false;
  const program = buildProgram(io, () => {
    workerRunning = true;
  });
  try {
    await program.parseAsync(argv);
    return { code: 0, workerRunning };
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander has already printed its message (or the help/version text).
      return { code: error.exitCode, workerRunning };
    }
    const { message, exitCode } = describeError(error);
    io.stderr.write(`${message}\n`);
    return { code: exitCode, workerRunning };
  }
}

/** Entry point for bin/circuits.js and `node dist/src/cli/index.js`: the process's own argv, env and output. */
export function main(argv: string[] = process.argv): void {
  runCli(argv, processIo()).then(
    ({ code, workerRunning }) => {
      // The worker keeps running on its own handles; every other command ends here.
      if (code !== 0 || !workerRunning) process.exit(code);
    },
    (error: unknown) => {
      process.stderr.write(`${describeError(error).message}\n`);
      process.exit(1);
    },
  );
}

if (require.main === module) main();
