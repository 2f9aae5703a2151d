import { foundation } from './0001-foundation';
import { runs } from './0002-runs';
import { boards } from './0003-boards-search';
import { blobs } from './0004-blobs-web';
import { webhooksSchedules } from './0007-webhooks-schedules';
import { runControl } from './0005-run-control';
import { authChanged } from './0009-auth-changed';
import { circuitDeprecatedAt } from './0010-circuit-deprecated-at';
import { jobOutbox } from './0011-job-outbox';
import { credits } from './0006-credits';
import { authChangedIgnoresBalance } from './0012-auth-changed-ignores-balance';
import { stateEventAfterLoggedEvents } from './0013-state-event-after-logged-events';
import { searchLexicon } from './0014-search-lexicon';
import { runReadsChanged } from './0015-run-reads-changed';
import { searchChangedRows } from './0016-search-changed-rows';
import { authChangedByColumn } from './0017-auth-changed-by-column';
import { runSteps } from './0018-run-steps';
import { circuitAliases } from './0019-circuit-aliases';
import { stepCache } from './0020-step-cache';
import { runTraceparent } from './0021-run-traceparent';
import { tokenLimits } from './0022-token-limits';
import { runLabelsBatches } from './0023-run-labels-batches';
import { userRunSlots } from './0024-user-run-slots';
import { runVisibilityChanged } from './0025-run-visibility-changed';
import { searchInPostgres } from './0026-search-in-postgres';
import { runMetricTotals } from './0029-run-metric-totals';
import { searchPostings } from './0030-search-postings';

import type { Migration } from './migration';

export type { Migration };

/** Append only: a migration once released is never edited. */
export const migrations: Migration[] = [foundation, runs, boards, blobs, authChanged, circuitDeprecatedAt, jobOutbox, credits, webhooksSchedules, runControl, authChangedIgnoresBalance, stateEventAfterLoggedEvents, searchLexicon, runReadsChanged, searchChangedRows, authChangedByColumn, runSteps, circuitAliases, stepCache, runTraceparent, tokenLimits, runLabelsBatches, userRunSlots, runVisibilityChanged, searchInPostgres, runMetricTotals, searchPostings].filter((m) => m.up.trim() !== '');
