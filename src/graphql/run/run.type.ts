import { DataTypes } from 'sequelize';
import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { GraphQLScalarType } from 'graphql';
import { RUN_COLUMNS, type CircuitRun, type RunApiField } from '../../models/CircuitRun';
import { RUN_ERROR_CODES, type RunError } from '../../domain/runs';
import { RUN_EVENT_KINDS } from '../../models/RunEvent';
import { JSONScalar } from '../common/scalars';
import { PageOf } from '../common/pagination';
import { shownRunFields, startAtOf, type WaitingStep } from '../../runs';

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

export const RunErrorCodeEnum = Object.fromEntries(RUN_ERROR_CODES.map((c) => [c, c])) as {
  [K in (typeof RUN_ERROR_CODES)[number]]: K;
};
registerEnumType(RunErrorCodeEnum, {
  name: 'RunErrorCode',
  description: "Why a run ended in EXCEPTION; shown to the run's owner only",
});

export const RunEventKindEnum = Object.fromEntries(RUN_EVENT_KINDS.map((k) => [k.toUpperCase(), k])) as Record<
  string,
  string
>;
registerEnumType(RunEventKindEnum, {
  name: 'RunEventKind',
  description: 'state: the run changed state; step: a step started or ended; output: text of a streaming llm step',
});

@ObjectType('CircuitRunError', { description: "Why a run failed; shown to the run's owner only" })
export class CircuitRunErrorType {
  @Field(() => RunErrorCodeEnum) code!: string;
  @Field(() => String, {
    description: 'What went wrong, safe to show: no stack, key, header value or internal address',
  })
  message!: string;
  @Field(() => ID, { nullable: true, description: 'The step that failed, when one did' }) stepId!: string | null;

  static from(error: RunError): CircuitRunErrorType {
    return Object.assign(new CircuitRunErrorType(), {
      code: error.code,
      message: error.message,
      stepId: error.step_id ?? null,
    });
  }
}

/** A step a run waits on (docs/runs.md, Waiting for the world); REST `waiting_for[]`. */
@ObjectType('WaitingStep', {
  description:
    'A step the run waits on: an approval (decide it with resolveApproval or its decisionUrl), a signal (send it with signalCircuitRun or POST its callbackUrl) or a time',
})
export class WaitingStepType {
  @Field(() => String, { description: 'The id of the step' }) stepId!: string;
  @Field(() => String, { description: 'approval, signal or time' }) kind!: string;
  @Field(() => String, { nullable: true, description: 'What the person deciding is asked (approvals)' })
  prompt!: string | null;
  @Field(() => JSONScalar, { nullable: true, description: "The JSON Schema a signal's data must match (signals)" })
  schema!: unknown;
  @Field(() => Date, {
    nullable: true,
    description: 'When its timeout decides it (on_timeout), or when a time wait ends',
  })
  expiresAt!: Date | null;
  @Field(() => String, {
    nullable: true,
    description: 'Signals: where anyone holding the URL POSTs the signal, without a token',
  })
  callbackUrl!: string | null;
  @Field(() => String, {
    nullable: true,
    description: 'Approvals: a page where a person without an account approves or rejects, without a token',
  })
  decisionUrl!: string | null;

  static from(step: WaitingStep, urls: { callback_url?: string; decision_url?: string }): WaitingStepType {
    return Object.assign(new WaitingStepType(), {
      stepId: step.step_id,
      kind: step.kind,
      prompt: step.prompt,
      schema: step.schema ?? null,
      expiresAt: step.expires_at,
      callbackUrl: urls.callback_url ?? null,
      decisionUrl: urls.decision_url ?? null,
    });
  }
}

@ObjectType('SignedUrl', {
  description:
    'A short-lived URL that needs no Authorization header: its signature covers what it opens, the caller and the expiry',
})
export class SignedUrlType {
  @Field(() => String) url!: string;
  @Field(() => Date) expiresAt!: Date;
}

/** A run as callers see it; its fields are built from RUN_COLUMNS below. */
@ObjectType('CircuitRun')
export class CircuitRunType {
  [field: string]: unknown;
  declare uid: string;
  declare userUid: string;
  declare isPublic: boolean;
  declare state: CircuitRunState;

  @Field(() => String, { description: 'Always circuit_run' }) documentType!: string;
  @Field(() => Date, {
    nullable: true,
    description:
      'When a delayed start (startAt, delaySeconds) is due, while the run is PROVISIONED; null for other runs and once it started',
  })
  startAt!: Date | null;

  /** The API view of `run`; `mayDebug`: the viewer may see owner-only fields (run policy `debug`; the rule is src/runs/present.ts). */
  static from(run: CircuitRun, mayDebug: boolean): CircuitRunType {
    const view = Object.assign(new CircuitRunType(), { documentType: 'circuit_run', startAt: startAtOf(run) });
    for (const { column, api, value } of shownRunFields(run, mayDebug)) {
      view[api.name] = value !== null && column === 'error' ? CircuitRunErrorType.from(value as RunError) : value;
    }
    return view;
  }
}

/** Column → the API field it shows as. */
const API_FIELDS = Object.entries(RUN_COLUMNS).flatMap(([column, spec]) =>
  'api' in spec && spec.api ? [[column, spec.api as RunApiField] as const] : [],
);

function graphqlTypeOf(column: string, type: unknown, api: RunApiField): () => unknown {
  if (column === 'error') return () => CircuitRunErrorType;
  if (column === 'tags') return () => [String];
  if (api.enumOf === 'state') return () => CircuitRunState;
  if (type === DataTypes.UUID) return () => ID;
  if (type === DataTypes.DATE) return () => Date;
  if (type === DataTypes.BOOLEAN) return () => Boolean;
  if (type === DataTypes.INTEGER || type === DataTypes.SMALLINT) return () => Int;
  if (type === DataTypes.JSONB) return () => JSONScalar as GraphQLScalarType;
  return () => String;
}

for (const [column, api] of API_FIELDS) {
  const spec = (RUN_COLUMNS as Record<string, { type: unknown; allowNull?: boolean }>)[column];
  const nullable = Boolean(api.when || api.ownerOnly || spec.allowNull);
  Field(graphqlTypeOf(column, spec.type, api) as never, {
    nullable,
    ...(api.description ? { description: api.description } : {}),
  })(CircuitRunType.prototype, api.name);
}

@InputType('CircuitRunContextInput')
export class CircuitRunContextInput {
  @Field(() => ID, { nullable: true, description: "The version to run; the circuit's primary version when absent" })
  version?: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'Instead of version: an alias of the circuit whose weights draw the version',
  })
  alias?: string | null;
}

@ObjectType('CircuitRunPage')
export class CircuitRunPage extends PageOf(CircuitRunType) {}

/** One entry of a run's event log (docs/runs.md, Event log). */
@ObjectType('CircuitRunEvent')
export class CircuitRunEventType {
  @Field(() => Int, { description: "Position in the run's log: 1, 2, 3… without gaps" }) seq!: number;
  @Field(() => RunEventKindEnum) kind!: string;
  @Field(() => Date) createdAt!: Date;
  @Field(() => CircuitRunType, { nullable: true, description: 'state events: the run as it was in that state' })
  run!: CircuitRunType | null;
  @Field(() => JSONScalar, {
    nullable: true,
    description:
      'step events: {step_id, kind, status, started_at, ended_at?, credits?, error? (owner only)}; output events: {step_id, delta}',
  })
  data!: Record<string, unknown> | null;
}
