import { Field, ID, InputType } from 'type-graphql';
import { MaxLength } from 'class-validator';

@InputType()
export class CreateCircuitInput {
  @Field(() => String) @MaxLength(100) name!: string;
  @Field(() => String, { nullable: true }) @MaxLength(2000) description?: string | null;
  @Field(() => Boolean, { nullable: true }) isPrivate?: boolean | null;
  @Field(() => Boolean, { nullable: true }) isProtected?: boolean | null;
  @Field(() => String, { nullable: true }) @MaxLength(100) licenseType?: string | null;
  @Field(() => ID, { nullable: true }) userCircuitMetricUid?: string | null;
}

/** Only the fields sent are changed. */
@InputType()
export class UpdateCircuitInput {
  @Field(() => String, { nullable: true }) @MaxLength(2000) description?: string | null;
  @Field(() => Boolean, { nullable: true }) isPrivate?: boolean | null;
  @Field(() => Boolean, { nullable: true }) isProtected?: boolean | null;
  @Field(() => String, { nullable: true }) @MaxLength(100) licenseType?: string | null;
}
