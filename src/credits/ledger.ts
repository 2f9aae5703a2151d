import { CreditLedger } from '../models/CreditLedger';

/** One page of a user's ledger, newest first (rows written in the same instant by write order). */
export async function ledgerPage(
  userUid: string,
  window: { limit: number; offset: number },
): Promise<{ rows: CreditLedger[]; count: number }> {
  return CreditLedger.findAndCountAll({
    where: { user_uid: userUid },
    order: [
      ['created_at', 'DESC'],
      ['seq', 'DESC'],
    ],
    limit: window.limit,
    offset: window.offset,
  });
}
