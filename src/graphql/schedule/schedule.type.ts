import { Field, ID, ObjectType } from 'type-graphql';
import { PageOf } from '../common/pagination';
import { JSONScalar } from '../common/scalars';
import { nextFireAt } from '../../schedules/cron';
import type { ScheduleRow } from '../../domain/schedule-row';

@ObjectType('CircuitSchedule', {
  description: 'Runs a circuit on a cron schedule, as its owner: each fire is an ordinary run',
})
export class CircuitScheduleType {
  @Field(() => ID) uid!: string;
  @Field(() => ID) circuitUid!: string;
  @Field(() => String, { description: '5 fields, or 6 with a leading seconds field; fires at most every 10 s' })
  cron!: string;
  @Field(() => String, { description: 'IANA time zone the cron is read in' }) timezone!: string;
  @Field(() => JSONScalar, { description: 'The input of every run' }) input!: Record<string, unknown>;
  @Field(() => ID, {
    nullable: true,
    description: "The version to run; null runs the circuit's primary version at each fire",
  })
  versionUid!: string | null;
  @Field(() => Boolean, { description: 'Whether its runs are public' }) isPublic!: boolean;
  @Field(() => Boolean) isPaused!: boolean;
  @Field(() => Date, { nullable: true, description: 'The next fire; null while paused' }) nextRunAt!: Date | null;
  @Field(() => ID, { nullable: true, description: 'The run the latest fire started' }) lastRunUid!: string | null;
  @Field(() => String, {
    nullable: true,
    description: 'Why the latest fire started no run (e.g. InsufficientCredits); null after a fire that did',
  })
  lastError!: string | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;

  static from(schedule: ScheduleRow): CircuitScheduleType {
    return Object.assign(new CircuitScheduleType(), {
      uid: schedule.uid,
      circuitUid: schedule.circuit_uid,
      cron: schedule.cron,
      timezone: schedule.timezone,
      input: schedule.input,
      versionUid: schedule.version_uid,
      isPublic: schedule.is_public,
      isPaused: schedule.is_paused,
      nextRunAt: schedule.is_paused ? null : nextFireAt(schedule.cron, schedule.timezone),
      lastRunUid: schedule.last_run_uid,
      lastError: schedule.last_error,
      createdAt: schedule.created_at,
      updatedAt: schedule.updated_at,
    });
  }
}

@ObjectType('CircuitSchedulePage')
export class CircuitSchedulePage extends PageOf(CircuitScheduleType) {}
