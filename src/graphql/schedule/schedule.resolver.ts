import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { notFound } from '../../errors';
import { isUid } from '../../ids';
import { authorize } from '../../policies/authorize';
import { schedulePermits } from '../../policies/schedule.policy';
import { createSchedule, deleteSchedule, updateSchedule } from '../../schedules/schedule-commands';
import { findSchedule, schedulesOfCircuit } from '../../schedules/schedule-store';
import type { ScheduleRow } from '../../domain/schedule-row';
import { findCircuitFor } from '../circuit/circuit.access';
import { PageArgs, paged, pageWindow } from '../common/pagination';
import { JSONObjectScalar } from '../common/scalars';
import type { AppContext } from '../context';
import { CircuitSchedulePage, CircuitScheduleType } from './schedule.type';

/** The schedule a request names, or NotFound; then only its owner may go on. */
async function findScheduleFor(ctx: AppContext, uid: string): Promise<ScheduleRow> {
  const schedule = isUid(uid) ? await findSchedule(ctx.services.sequelize, uid) : null;
  if (!schedule) throw notFound('Schedule');
  authorize(
    ctx.viewer,
    schedulePermits(ctx.viewer, schedule, 'manage'),
    'Only the user who created the schedule may see or change it',
  );
  return schedule;
}

@Resolver(() => CircuitScheduleType)
export class ScheduleResolver {
  @Authorized()
  @Mutation(() => CircuitScheduleType, { description: 'Runs the circuit on a cron schedule, as you (owner only)' })
  async createCircuitSchedule(
    @Arg('circuitUid', () => ID) circuitUid: string,
    @Arg('cron', () => String) cron: string,
    @Arg('timezone', () => String, { nullable: true, description: 'IANA time zone (default UTC)' })
    timezone: string | null,
    @Arg('input', () => JSONObjectScalar, { validate: false }) input: Record<string, unknown>,
    @Arg('versionUid', () => ID, { nullable: true, description: "Default: the circuit's primary version at each fire" })
    versionUid: string | null,
    @Arg('isPublic', () => Boolean, { nullable: true }) isPublic: boolean | null,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitScheduleType> {
    const circuit = await findCircuitFor(ctx, circuitUid, 'manage');
    return CircuitScheduleType.from(
      await createSchedule(ctx.services.schedules, ctx.viewer!, circuit, {
        cron,
        timezone,
        input,
        versionUid,
        isPublic,
      }),
    );
  }

  @Authorized()
  @Query(() => CircuitSchedulePage, { description: "The circuit's schedules, oldest first (owner only)" })
  async circuitSchedules(
    @Arg('circuitUid', () => ID) circuitUid: string,
    @Args(() => PageArgs) args: PageArgs,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitSchedulePage> {
    const circuit = await findCircuitFor(ctx, circuitUid, 'manage');
    const window = pageWindow(args);
    const { rows, total } = await schedulesOfCircuit(ctx.services.sequelize, circuit.uid, window.limit, window.offset);
    return paged(
      rows.map((row) => CircuitScheduleType.from(row)),
      total,
      window,
    );
  }

  @Authorized()
  @Query(() => CircuitScheduleType, { nullable: true, description: 'A schedule (its creator only)' })
  async circuitSchedule(@Arg('uid', () => ID) uid: string, @Ctx() ctx: AppContext): Promise<CircuitScheduleType> {
    return CircuitScheduleType.from(await findScheduleFor(ctx, uid));
  }

  @Authorized()
  @Mutation(() => CircuitScheduleType, {
    description:
      'Pauses, resumes or changes a schedule; absent arguments keep their value, a null versionUid means the primary version',
  })
  async updateCircuitSchedule(
    @Arg('uid', () => ID) uid: string,
    @Arg('cron', () => String, { nullable: true }) cron: string | undefined,
    @Arg('timezone', () => String, { nullable: true }) timezone: string | undefined,
    @Arg('input', () => JSONObjectScalar, { nullable: true, validate: false })
    input: Record<string, unknown> | undefined,
    @Arg('versionUid', () => ID, { nullable: true }) versionUid: string | null | undefined,
    @Arg('isPublic', () => Boolean, { nullable: true }) isPublic: boolean | undefined,
    @Arg('isPaused', () => Boolean, { nullable: true }) isPaused: boolean | undefined,
    @Ctx() ctx: AppContext,
  ): Promise<CircuitScheduleType> {
    const schedule = await findScheduleFor(ctx, uid);
    const circuit = await findCircuitFor(ctx, schedule.circuit_uid, 'manage');
    return CircuitScheduleType.from(
      await updateSchedule(ctx.services.schedules, circuit, schedule, {
        cron: cron ?? undefined,
        timezone: timezone ?? undefined,
        input: input ?? undefined,
        versionUid,
        isPublic,
        isPaused,
      }),
    );
  }

  @Authorized()
  @Mutation(() => Boolean, { description: 'Deletes a schedule; it never fires again' })
  async deleteCircuitSchedule(@Arg('uid', () => ID) uid: string, @Ctx() ctx: AppContext): Promise<boolean> {
    return deleteSchedule(ctx.services.schedules, await findScheduleFor(ctx, uid));
  }
}
