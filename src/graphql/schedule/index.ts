import { ScheduleResolver } from './schedule.resolver';

/** Resolvers of the schedule domain. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const scheduleResolvers: Function[] = [ScheduleResolver];
