import type { Command } from 'commander';
import type { CliIo } from '../io';
import { implementation } from '../lazy';
import { positiveInteger, usernameFilter } from '../options';
import { printList } from '../output';
import type * as ListModule from './list';

export function register(schedule: Command, io: CliIo): void {
  usernameFilter(schedule.command('list'), "only this user's schedules")
    .description('list schedules of every user, oldest first, with their next fire and last outcome')
    .option(
      '--circuit <uid|owner/name>',
      "only this circuit's schedules (a uid, or owner/name; a bare name is --username's circuit)",
    )
    .option('--paused', 'only paused schedules')
    .option('--active', 'only schedules that are not paused')
    .option('--limit <n>', 'schedules per page (1-1000)', positiveInteger, 50)
    .option('--page <n>', '1-based page', positiveInteger, 1)
    .option('--table', 'print a table instead of JSON')
    .action(async (options: ListModule.ScheduleListOptions & { table?: boolean }) => {
      const { scheduleList, SCHEDULE_COLUMNS } = implementation(() => require('./list') as typeof ListModule);
      printList(io, await scheduleList(io, options), options, SCHEDULE_COLUMNS);
    });
}
