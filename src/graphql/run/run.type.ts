import { Field, ID, InputType, ObjectType, registerEnumType } from 'type-graphql';
import type { CircuitRun } from '../../models/CircuitRun';
import { JSONScalar } from '../common/scalars';
import { PageOf } from '../common/pagination';

export enum CircuitRunState {
  PROVISIONED = 'PROVISIONED',
  RUNNING = 'RUNNING',
  COMPLETED = 'COMPLETED',
  EXCEPTION = 'EXCEPTION',
}
registerEnumType(CircuitRunState, {
  name: 'CircuitRunState',
  description: 'PROVISIONED → RUNNING → COMPLETED | EXCEPTION; COMPLETED and EXCEPTION are terminal',
});

/** A run as callers see it (spec 2.1). Its failure reason is never exposed. */
@ObjectType('CircuitRun')
export class CircuitRunType {
  @Field(() => ID) uid!: string;
  @Field(() => ID, { description: 'The user who started the run' }) userUid!: string;
  @Field(() => ID) circuitUid!: string;
  @Field(() => ID) circuitVersionUid!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'Set once the run is COMPLETED or EXCEPTION' }) endedAt!: Date | null;
  @Field(() => CircuitRunState) state!: CircuitRunState;
  @Field(() => Boolean, { description: 'Whether anyone may read the run' }) isPublic!: boolean;
  @Field(() => String, { description: 'Always circuit_run' }) documentType!: string;
  @Field(() => JSONScalar, { nullable: true, description: '{output, steps: {<id>: {kind, output, started_at, ended_at, credits}}}; only when COMPLETED' })
  resultBlob!: unknown;
  @Field(() => JSONScalar, { nullable: true, description: "Values of the circuit's metric configuration ({name: value}); completed runs only" })
  metrics!: Record<string, unknown> | null;

  static from(run: CircuitRun): CircuitRunType {
    const completed = run.state === 'COMPLETED';
    return Object.assign(new CircuitRunType(), {
      uid: run.uid,
      userUid: run.user_uid,
      circuitUid: run.circuit_uid,
      circuitVersionUid: run.circuit_version_uid,
      createdAt: run.created_at,
      endedAt: run.ended_at ?? null,
      state: run.state as CircuitRunState,
      isPublic: run.is_public,
      documentType: 'circuit_run',
      resultBlob: completed ? run.result_blob ?? null : null,
      metrics: completed ? run.metrics ?? null : null,
    });
  }
}

@InputType('CircuitRunContextInput')
export class CircuitRunContextInput {
  @Field(() => ID, { nullable: true, description: "The version to run; the circuit's primary version when absent" })
  version?: string | null;
}

@ObjectType('CircuitRunPage')
export class CircuitRunPage extends PageOf(CircuitRunType) {}
