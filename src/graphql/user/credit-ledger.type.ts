import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { CreditLedger } from '../../models/CreditLedger';
import { PageOf } from '../common/pagination';

export enum CreditLedgerKind {
  run = 'run',
  grant = 'grant',
}
registerEnumType(CreditLedgerKind, {
  name: 'CreditLedgerKind',
  description: 'grant: credits added; run: the charge of an ended run',
});

/** One change of the caller's balance: a grant, or the charge of an ended run. */
@ObjectType('CreditLedgerEntry')
export class CreditLedgerEntryType {
  @Field(() => ID) uid!: string;
  @Field(() => CreditLedgerKind) kind!: CreditLedgerKind;
  @Field(() => ID, { nullable: true, description: 'The run charged (kind run only)' }) runUid!: string | null;
  @Field(() => Int, { description: 'The change of the balance: positive for a grant, zero or negative for a run' })
  amount!: number;
  @Field(() => Int, { description: 'The balance right after this change' }) balanceAfter!: number;
  @Field(() => Date) createdAt!: Date;

  static from(row: CreditLedger): CreditLedgerEntryType {
    return Object.assign(new CreditLedgerEntryType(), {
      uid: row.uid,
      kind: row.kind as CreditLedgerKind,
      runUid: row.run_uid ?? null,
      amount: Number(row.amount),
      balanceAfter: Number(row.balance_after),
      createdAt: row.created_at,
    });
  }
}

@ObjectType('CreditLedgerPage')
export class CreditLedgerPage extends PageOf(CreditLedgerEntryType) {}
