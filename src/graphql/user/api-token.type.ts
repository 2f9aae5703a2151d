import { Field, ID, Int, ObjectType } from 'type-graphql';
import type { ApiToken } from '../../models';
import { TOKEN_SCOPES } from '../../domain/token-scopes';
import { PageOf } from '../common/pagination';
import { apiTokenView } from '../../views/api-token.view';

/** One of the caller's API tokens, without its secret: only its hash is stored. */
@ObjectType('ApiToken')
export class ApiTokenType {
  @Field(() => ID) uid!: string;
  @Field(() => String) label!: string;
  @Field(() => [String], {
    description: `What the token may do: any of ${TOKEN_SCOPES.join(', ')} (all when it was created without scopes)`,
  })
  scopes!: string[];
  @Field(() => Date, { nullable: true, description: 'When the token stops working (401); null: never' })
  expiresAt!: Date | null;
  @Field(() => [ID], { nullable: true, description: 'The only circuits the token may run; null: any the user may run' })
  circuitUids!: string[] | null;
  @Field(() => Int, { nullable: true, description: "Credits the token's runs may take per UTC day; null: no cap" })
  maxCreditsPerDay!: number | null;
  @Field(() => Int, {
    description: "Credits the token's runs hold or were charged today (UTC); 0 without a cap, which is not counted",
  })
  creditsSpentToday!: number;
  @Field(() => Date, { nullable: true }) lastUsedAt!: Date | null;
  @Field(() => Date) createdAt!: Date;

  static from(row: ApiToken, spentToday: number): ApiTokenType {
    return Object.assign(new ApiTokenType(), apiTokenView(row, spentToday));
  }
}

/** A page of the caller's active API tokens, newest first. */
@ObjectType('ApiTokenPage')
export class ApiTokenPage extends PageOf(ApiTokenType) {}

/** A token just created: the only answer that carries the token itself. */
@ObjectType('NewApiToken')
export class NewApiTokenType {
  @Field(() => String, { description: 'The bearer token: shown this once, never again' }) token!: string;
  @Field(() => ApiTokenType) apiToken!: ApiTokenType;

  static created(row: ApiToken, token: string): NewApiTokenType {
    return Object.assign(new NewApiTokenType(), { token, apiToken: ApiTokenType.from(row, 0) });
  }
}
