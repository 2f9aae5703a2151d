import { Field, ID, Int, ObjectType } from 'type-graphql';
import type { User as UserModel } from '../../models';
import type { Balance } from '../../credits/balance';
import { profileView, viewerView } from '../../views/user.view';

/** A user's public profile. */
@ObjectType('User')
export class UserProfile {
  @Field(() => ID) uid!: string;
  @Field(() => String) username!: string;
  @Field(() => String) name!: string;
  @Field(() => String) bio!: string;
  @Field(() => Date) createdAt!: Date;

  static from(user: UserModel): UserProfile {
    return Object.assign(new UserProfile(), profileView(user));
  }
}

/** The caller: their profile plus what only they see. */
@ObjectType('Viewer')
export class Viewer extends UserProfile {
  @Field(() => Boolean) isPrivate!: boolean;
  @Field(() => Boolean) isAdmin!: boolean;
  @Field(() => Int, { description: 'Credit balance' }) credits!: number;
  @Field(() => Int, {
    description: 'Credits your runs in progress have reserved; a new run or costly step needs credits - creditsHeld',
  })
  creditsHeld!: number;

  static fromViewer(user: UserModel, balance: Balance): Viewer {
    return Object.assign(new Viewer(), viewerView(user, balance));
  }
}
