import type { Command } from 'commander';
import type { CliIo } from '../io';
import { implementation } from '../lazy';
import { positiveInteger, usernameFilter } from '../options';
import { printJson, printList } from '../output';
import type * as ListModule from './list';
import type * as ShowModule from './show';
import type * as CancelModule from './cancel';
import type * as ReplayLastModule from './replay-last';

export function register(run: Command, io: CliIo): void {
  usernameFilter(run.command('list'), "only this user's runs")
    .description('list runs of every user, newest first, with the operator details of `run show`')
    .option('--state <state>', 'only runs in this state: PROVISIONED, RUNNING, COMPLETED or EXCEPTION')
    .option(
      '--circuit <uid|owner/name>',
      "only runs of this circuit (a uid, or owner/name; a bare name is --username's circuit)",
    )
    .option('--limit <n>', 'runs per page (1-1000)', positiveInteger, 20)
    .option('--page <n>', '1-based page', positiveInteger, 1)
    .option('--table', 'print a table instead of JSON')
    .action(async (options: ListModule.RunListOptions & { table?: boolean }) => {
      const { runList, RUN_LIST_COLUMNS } = implementation(() => require('./list') as typeof ListModule);
      printList(io, await runList(io, options), options, RUN_LIST_COLUMNS);
    });
  run
    .command('show')
    .description('show a run with its failure reason, cost and attempts')
    .requiredOption('--uid <uid>', 'the run uid')
    .action(async (options: ShowModule.RunShowOptions) => {
      const { runShow } = implementation(() => require('./show') as typeof ShowModule);
      printJson(io, await runShow(io, options));
    });
  run
    .command('cancel')
    .description(
      'cancel a run as its owner would (ends EXCEPTION Canceled; webhooks, events and the ledger as usual); prints the run',
    )
    .requiredOption('--uid <uid>', 'the run uid')
    .action(async (options: CancelModule.RunCancelOptions) => {
      const { runCancel } = implementation(() => require('./cancel') as typeof CancelModule);
      printJson(io, await runCancel(io, options));
    });
  run
    .command('replay-last')
    .description(
      "replay the user's last terminal runs of a circuit against a version, wait for them and print what changed (needs a running worker)",
    )
    .requiredOption('--username <username>', 'the user whose runs are replayed (the circuit owner)')
    .requiredOption('--circuit <name>', 'circuit name')
    .requiredOption('--version <uid>', 'the candidate version (of that circuit)')
    .option('--count <n>', 'how many of the last runs (default 5)')
    .option('--mode <mode>', 'recorded (default: unchanged requests reuse the original outputs) or live')
    .option('--timeout-s <s>', 'how long to wait for the replays (default 300)')
    .action(async (options: ReplayLastModule.RunReplayLastOptions) => {
      const { runReplayLast } = implementation(() => require('./replay-last') as typeof ReplayLastModule);
      printJson(io, await runReplayLast(io, options));
    });
}
