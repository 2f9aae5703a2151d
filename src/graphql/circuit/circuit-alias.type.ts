import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import type { AliasRoute, CircuitAlias as AliasModel, CircuitAliasHistory as HistoryModel } from '../../models';
import { PageOf } from '../common/pagination';
import { aliasHistoryView, aliasRouteView, aliasView } from '../../views/alias.view';

@ObjectType('CircuitAliasRoute', {
  description: 'One weighted route of an alias: that share of the queries sent to the alias run this version',
})
export class CircuitAliasRouteType {
  @Field(() => ID) versionUid!: string;
  @Field(() => Int, { description: '1–100; the routes of an alias add up to 100' }) weight!: number;

  static from(route: AliasRoute): CircuitAliasRouteType {
    return Object.assign(new CircuitAliasRouteType(), aliasRouteView(route));
  }
}

@InputType('CircuitAliasRouteInput')
export class CircuitAliasRouteInput {
  @Field(() => ID, { description: 'A version of the circuit' }) versionUid!: string;
  @Field(() => Int, { description: 'A whole number from 1 to 100; the weights of an alias add up to 100' })
  weight!: number;
}

@ObjectType('CircuitAlias', {
  description:
    'Weighted versions of a circuit under a name: a query naming it (context.alias) runs a version drawn by weight',
})
export class CircuitAliasType {
  @Field(() => String) name!: string;
  @Field(() => ID) circuitUid!: string;
  @Field(() => [CircuitAliasRouteType], { description: '1–5 routes whose weights add up to 100' })
  routes!: CircuitAliasRouteType[];
  @Field(() => Date, { description: 'When the current routes were set' }) updatedAt!: Date;

  static from(alias: AliasModel): CircuitAliasType {
    const view = aliasView(alias);
    return Object.assign(new CircuitAliasType(), view, {
      routes: alias.routes.map((r) => CircuitAliasRouteType.from(r)),
    });
  }
}

@ObjectType('CircuitAliasHistoryEntry', {
  description: 'A route set an alias had before its current one; a rollback is setCircuitAlias with these routes',
})
export class CircuitAliasHistoryEntryType {
  @Field(() => [CircuitAliasRouteType]) routes!: CircuitAliasRouteType[];
  @Field(() => Date, { description: 'When these routes were set' }) updatedAt!: Date;
  @Field(() => Date, { description: 'When a later set replaced them' }) replacedAt!: Date;

  static from(entry: HistoryModel): CircuitAliasHistoryEntryType {
    return Object.assign(new CircuitAliasHistoryEntryType(), aliasHistoryView(entry), {
      routes: entry.routes.map((r) => CircuitAliasRouteType.from(r)),
    });
  }
}

@ObjectType('CircuitAliasPage')
export class CircuitAliasPage extends PageOf(CircuitAliasType) {}

@ObjectType('CircuitAliasHistoryPage')
export class CircuitAliasHistoryPage extends PageOf(CircuitAliasHistoryEntryType) {}
