import '../debug-colors';
import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError, Help, type Option } from 'commander';
import { PROJECT_ROOT } from '../paths';
import { describeError } from './output';
import * as userCreate from './user/create';
import * as userSetPassword from './user/set-password';
import * as tokenCreate from './token/create';
import * as tokenList from './token/list';
import * as tokenRevoke from './token/revoke';
import * as creditsGrant from './credits/grant';
import * as creditsShow from './credits/show';
import * as runShow from './run/show';
import * as runReplayLast from './run/replay-last';
import * as blobList from './blob/list';
import * as circuitCreate from './circuit/create';
import * as versionPublish from './version/publish';
import * as versionSetPrimary from './version/set-primary';
import * as aliasSet from './alias/set';
import * as blobUpload from './blob/upload';
import * as migrate from './migrate';
import * as worker from './worker';

/**
 * `circuits <noun> <verb>`: operator commands on the service's database (DESIGN §2). Each prints
 * JSON on stdout; on error, one line on stderr and a non-zero exit.
 */
export function buildProgram(): Command {
  const program = new Command('circuits')
    .description('Circuit Service administration. Uses DATABASE_URL, else the embedded PostgreSQL of DATA_DIR (default ./.data).')
    .version(packageVersion(), '-V, --version', 'print the version')
    // `--version` after a subcommand is that command's own option (`version set-primary --version UID`).
    .enablePositionalOptions()
    // Subcommands inherit this: required options say so in --help.
    .configureHelp({ optionDescription: (option: Option) => `${new Help().optionDescription(option)}${option.mandatory ? ' (required)' : ''}` })
    .showSuggestionAfterError()
    .exitOverride();

  const noun = (name: string, description: string) => program.command(name).description(description).exitOverride();
  const user = noun('user', 'manage users');
  userCreate.register(user);
  userSetPassword.register(user);
  const token = noun('token', 'manage API tokens');
  tokenCreate.register(token);
  tokenList.register(token);
  tokenRevoke.register(token);
  const credits = noun('credits', 'manage credit balances');
  creditsGrant.register(credits);
  creditsShow.register(credits);
  circuitCreate.register(noun('circuit', 'manage circuits'));
  const version = noun('version', 'publish circuit versions and choose the primary one');
  versionPublish.register(version);
  versionSetPrimary.register(version);
  aliasSet.register(noun('alias', 'manage version aliases'));
  const blob = noun('blob', 'manage blobs');
  blobUpload.register(blob);
  blobList.register(blob);
  const run = noun('run', 'inspect and replay runs');
  runShow.register(run);
  runReplayLast.register(run);
  migrate.register(program);
  worker.register(program);
  for (const command of program.commands) for (const sub of command.commands) sub.exitOverride();
  return program;
}

function packageVersion(): string {
  const { version } = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
  return version;
}

/** Parses argv and runs the command; resolves to the process exit code. */
export async function runCli(argv: string[] = process.argv): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander has already printed its message (or the help/version text).
      return error.exitCode;
    }
    const { message, exitCode } = describeError(error);
    process.stderr.write(`${message}\n`);
    return exitCode;
  }
}

/** Entry point for bin/circuits.js and `node dist/src/cli/index.js`. */
export function main(argv: string[] = process.argv): void {
  runCli(argv).then(
    (code) => {
      // The worker keeps running on its own handles; every other command ends here.
      if (code !== 0 || !worker.workerState.running) process.exit(code);
    },
    (error: unknown) => {
      process.stderr.write(`${describeError(error).message}\n`);
      process.exit(1);
    },
  );
}

if (require.main === module) main();
