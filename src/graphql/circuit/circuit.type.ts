import { Field, ID, Int, ObjectType } from 'type-graphql';
import type {
  Circuit as CircuitModel,
  CircuitAdaptor as AdaptorModel,
  CircuitVersion as VersionModel,
} from '../../models';
import { JSONScalar } from '../common/scalars';
import { PageOf } from '../common/pagination';
import { circuitView, versionView } from '../../views/circuit.view';

@ObjectType('Circuit')
export class CircuitType {
  @Field(() => ID) uid!: string;
  @Field(() => String) name!: string;
  @Field(() => String) description!: string;
  @Field(() => String, { description: "Owner's username" }) username!: string;
  @Field(() => Boolean) isPrivate!: boolean;
  @Field(() => Boolean) isProtected!: boolean;
  @Field(() => String, { nullable: true }) licenseType!: string | null;
  @Field(() => ID, { nullable: true }) userCircuitMetricUid!: string | null;
  @Field(() => Boolean) isDeprecated!: boolean;
  @Field(() => Int) starCount!: number;
  @Field(() => ID, { description: 'The default query adaptor: POST /circuit-adaptors/{adaptorUid}/query' })
  adaptorUid!: string;
  @Field(() => ID, { nullable: true }) primaryVersionUid!: string | null;
  @Field(() => Date) createdAt!: Date;
  @Field(() => Date) updatedAt!: Date;

  static from(circuit: CircuitModel, username: string, adaptorUid: string): CircuitType {
    return Object.assign(new CircuitType(), circuitView(circuit, username, adaptorUid));
  }
}

/** An entry point of a circuit; every circuit has one default adaptor of kind `query`. */
@ObjectType('CircuitAdaptor')
export class CircuitAdaptorType {
  @Field(() => ID) uid!: string;
  @Field(() => ID) circuitUid!: string;
  @Field(() => String, { description: 'What the adaptor accepts: `query` (POST /circuit-adaptors/{uid}/query)' })
  kind!: string;
  @Field(() => Date) createdAt!: Date;

  static from(adaptor: AdaptorModel): CircuitAdaptorType {
    return Object.assign(new CircuitAdaptorType(), {
      uid: adaptor.uid,
      circuitUid: adaptor.circuit_uid,
      kind: adaptor.kind,
      createdAt: adaptor.created_at,
    });
  }
}

@ObjectType('CircuitVersion')
export class CircuitVersionType {
  @Field(() => ID) uid!: string;
  @Field(() => ID) circuitUid!: string;
  @Field(() => Int) number!: number;
  @Field(() => JSONScalar) definition!: unknown;
  @Field(() => JSONScalar, { description: 'The JSON Schema that a query input must satisfy' }) querySchema!: unknown;
  @Field(() => Boolean) isPrimary!: boolean;
  @Field(() => Boolean) isDeprecated!: boolean;
  @Field(() => Date) createdAt!: Date;

  static from(version: VersionModel, primaryVersionUid: string | null): CircuitVersionType {
    return Object.assign(new CircuitVersionType(), versionView(version, primaryVersionUid));
  }
}

@ObjectType('CircuitStarState', { description: "The caller's star on a circuit after a star or unstar" })
export class CircuitStarState {
  @Field(() => Boolean) starred!: boolean;
  @Field(() => Int) starCount!: number;
}

@ObjectType('ExplainedInput', { description: 'One field of the input a run accepts' })
export class ExplainedInputType {
  @Field(() => String) name!: string;
  @Field(() => String, { description: 'JSON Schema type in words, e.g. string, array of number' }) type!: string;
  @Field(() => Boolean) required!: boolean;
  @Field(() => String) description!: string;
}

@ObjectType('ExplainedStep', { description: 'One step of a circuit, in plain words' })
export class ExplainedStepType {
  @Field(() => String) id!: string;
  @Field(() => String) kind!: string;
  @Field(() => String) description!: string;
}

@ObjectType('CircuitExplanation', { description: "A human-readable breakdown of a circuit's primary version" })
export class CircuitExplanationType {
  @Field(() => CircuitType) circuit!: CircuitType;
  @Field(() => ID) versionUid!: string;
  @Field(() => [ExplainedInputType]) inputs!: ExplainedInputType[];
  @Field(() => [ExplainedStepType]) steps!: ExplainedStepType[];
  @Field(() => String, { description: 'One line for the inputs, one per step, one for the result' }) text!: string;
}

@ObjectType('CircuitPage')
export class CircuitPage extends PageOf(CircuitType) {}

@ObjectType('CircuitVersionPage')
export class CircuitVersionPage extends PageOf(CircuitVersionType) {}
