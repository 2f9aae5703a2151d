import { Field, InputType } from 'type-graphql';
import { IsOptional, MaxLength } from 'class-validator';

@InputType()
export class CreateBoardInput {
  @Field(() => String, { description: 'Unique per owner; the same rules as circuit names' })
  @MaxLength(100)
  name!: string;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(2000) description?: string | null;
  @Field(() => Boolean, { nullable: true, description: 'Default false' }) isPrivate?: boolean | null;
  @Field(() => Boolean, { nullable: true, description: 'Protected from being copied. Default false' }) isProtected?:
    boolean | null;
}

/** Only the fields sent are changed. */
@InputType()
export class UpdateBoardInput {
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(100) name?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(2000) description?: string | null;
  @Field(() => Boolean, { nullable: true }) isPrivate?: boolean | null;
  @Field(() => Boolean, { nullable: true }) isProtected?: boolean | null;
}
